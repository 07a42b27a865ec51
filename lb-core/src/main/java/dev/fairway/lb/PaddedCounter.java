package dev.fairway.lb;

import java.util.concurrent.atomic.AtomicLongFieldUpdater;

abstract class PaddedCounterPadBefore {
  long p01, p02, p03, p04, p05, p06, p07, p08;
}

abstract class PaddedCounterValue extends PaddedCounterPadBefore {
  volatile long value;
}

/** An atomic counter alone on its cache line, for rotation cursors shared by all picking threads. */
final class PaddedCounter extends PaddedCounterValue {
  private static final AtomicLongFieldUpdater<PaddedCounterValue> VALUE =
      AtomicLongFieldUpdater.newUpdater(PaddedCounterValue.class, "value");

  long q01, q02, q03, q04, q05, q06, q07, q08;

  /** A counter whose first {@link #nextIndex} is {@code start} (mod n). */
  PaddedCounter(long start) {
    value = start;
  }

  /**
   * A rotation cursor that starts at a random place, so that the balancers of a fleet, all built
   * with the same list at the same moment, do not send their first calls to the same target in
   * lockstep (grpc-java issue 4462: during deploys some servers got 3-4x the load).
   */
  static PaddedCounter randomStart(RandomSource random) {
    return new PaddedCounter(random.nextInt(Integer.MAX_VALUE));
  }

  /** The next value reduced modulo {@code n} (never negative, even after overflow). */
  int nextIndex(int n) {
    return (int) Long.remainderUnsigned(VALUE.getAndIncrement(this), n);
  }
}
