package dev.fairway.lb;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/** Padding so that the load fields below do not share a cache line with other objects' fields. */
abstract class PeakEwmaLoadPadBefore {
  long p01, p02, p03, p04, p05, p06, p07, p08;
}

/**
 * The per-target load metric: calls in flight and a peak-EWMA latency average (as Finagle's
 * {@code PeakEwma}). It measures; it does not choose: strategies (the distribution) read it to
 * score targets. It is a superclass of {@link TrackedTarget} rather than a field so that a
 * selection reads it without another pointer hop. Next to the EWMA: the windowed minimum latency
 * (the service time) and the target's latest load report (see {@link Pick#reportLoad}).
 *
 * <p>Every pick and completion touches these fields, so they sit together on their own cache
 * line(s). Lock-free; the EWMA is a racy read-modify-write by design (a lost sample, never a
 * corrupt one).
 */
abstract class PeakEwmaLoad extends PeakEwmaLoadPadBefore {
  private static final AtomicIntegerFieldUpdater<PeakEwmaLoad> IN_FLIGHT =
      AtomicIntegerFieldUpdater.newUpdater(PeakEwmaLoad.class, "inFlight");

  volatile int inFlight;
  /** Latency average in nanoseconds; 0 until the first sample. */
  volatile double ewmaNanos;
  /** Ticker value of the last EWMA update. */
  volatile long ewmaStampNanos;

  /**
   * The target's service time as this balancer sees it: the lowest successful latency of the
   * previous and the current window (see {@link #recordSuccessLatency}), in nanoseconds; 0 until the
   * first success. TCP Vegas' base RTT: latency above it is queueing.
   */
  volatile double minLatencyNanos;
  /** The lowest successful latency of the current window alone. */
  volatile double windowMinNanos;
  /** Ticker value at which the current window began. */
  volatile long windowStartNanos;

  // The latest load report from the target itself (see Pick#reportLoad). Three racy fields: a reader
  // may see two reports' halves, both recent; never a value the target did not send.
  /** Reported utilization (1.0 = every worker busy); NaN when the report had none. */
  volatile double reportedUtilization = Double.NaN;
  /** Reported requests in flight at the target, from every client; NaN when the report had none. */
  volatile double reportedInFlight = Double.NaN;
  /** This balancer's own in-flight count on the target when the report arrived. */
  volatile int inFlightAtReport;
  /** Ticker value of the report; meaningful only while {@link #reported} is true. */
  volatile long reportStampNanos;
  /** True once any report arrived. */
  volatile boolean reported;

  int inFlight() {
    return inFlight;
  }

  // What this balancer learned of the target's concurrency from its own calls (see recordConcurrency).
  /** The most calls of this balancer the target served at once without queueing; 0 until known. */
  volatile int learnedConcurrency;
  /** Ticker value until which probing one call above {@link #learnedConcurrency} waits. */
  volatile long probeBlockedUntilNanos;
  /**
   * When this balancer's last call that was alone on the target waited, or {@link #NO_ALONE_WAIT}
   * if that call did not wait (or none has yet).
   */
  volatile long aloneWaitedAtNanos = NO_ALONE_WAIT;
  static final long NO_ALONE_WAIT = Long.MIN_VALUE;

  /** A call at most this many times the service time did not queue. */
  static final double NO_QUEUE_RATIO = 1.1;
  /** A call more than this many times the service time queued. */
  static final double QUEUED_RATIO = 1.5;

  /**
   * Learns from a successful call how many calls the target serves at once, the way TCP Vegas reads
   * a queue from round-trip times, with this balancer's own count standing in for the target's:
   * {@code inFlightAtPick} is how many of this balancer's calls were on the target when this one was
   * sent (itself included). A call no slower than {@value #NO_QUEUE_RATIO} x the service time did
   * not wait, so the target served that many at once: the estimate rises to it. A call slower than
   * {@value #QUEUED_RATIO} x waited: sent above the estimate, it was a probe that found the limit
   * (probing pauses for a window of the minimum, see {@link #recordSuccessLatency}); sent at or
   * below, the estimate was too high and drops by one. Two calls in a row that were this
   * balancer's only one on the target and still waited, the second within {@link
   * OtherClients#holdNanos} of the first, prove that other clients load it: the method returns true,
   * and the caller stops trusting its own counts (see {@link LeastQueueingStrategy}). One such call
   * alone proves nothing: a garbage-collection pause or a cold cache makes one call in a hundred
   * slow on a target nobody else calls (the lab's {@code jitter}: 1% of calls 20x slower kept one
   * client's balancer in least-response-time mode for about half its picks). Racy like the EWMA.
   *
   * @return true if the call shows load from other clients
   */
  boolean recordConcurrency(int inFlightAtPick, long latencyNanos, long nowNanos) {
    double min = minLatencyNanos;
    if (min <= 0 || inFlightAtPick <= 0) {
      return false;
    }
    int learned = learnedConcurrency;
    if (latencyNanos <= min * NO_QUEUE_RATIO) {
      if (inFlightAtPick == 1) {
        aloneWaitedAtNanos = NO_ALONE_WAIT;
      }
      if (inFlightAtPick > learned) {
        learnedConcurrency = inFlightAtPick;
      }
      return false;
    }
    if (latencyNanos <= min * QUEUED_RATIO) {
      return false; // too close to tell
    }
    if (inFlightAtPick == 1) {
      long previous = aloneWaitedAtNanos;
      aloneWaitedAtNanos = nowNanos;
      return previous != NO_ALONE_WAIT && nowNanos - previous <= OtherClients.holdNanos(min);
    }
    if (inFlightAtPick > learned) {
      probeBlockedUntilNanos = nowNanos + Math.max(MIN_WINDOW_NANOS, (long) (MIN_WINDOW_FACTOR * min));
    } else if (learned > 1) {
      learnedConcurrency = learned - 1;
    }
    return false;
  }

  /**
   * True if this balancer may send one more call without it waiting, as far as its own calls tell:
   * fewer of them are in flight than it learned the target serves at once, or exactly as many and no
   * probe above that queued lately. (Not the latency average: one queued probe lifts a peak EWMA for
   * seconds. A target that became slower is caught by {@link #recordConcurrency} instead: each slow
   * call at or below the estimate lowers it by one.)
   */
  final boolean freeByOwnCount(long nowNanos) {
    int learned = learnedConcurrency;
    if (learned == 0) {
      return false;
    }
    int k = inFlight;
    return k < learned || (k == learned && nowNanos - probeBlockedUntilNanos >= 0);
  }


  /**
   * Stores a report from the target at {@code nowNanos}; NaN or negative values are not kept (the
   * field keeps NaN). A report with neither value changes nothing.
   */
  void recordReport(double utilization, double requestsInFlight, long nowNanos) {
    boolean u = utilization >= 0 && utilization < Double.POSITIVE_INFINITY;
    boolean r = requestsInFlight >= 0 && requestsInFlight < Double.POSITIVE_INFINITY;
    if (!u && !r) {
      return;
    }
    reportedUtilization = u ? utilization : Double.NaN;
    reportedInFlight = r ? requestsInFlight : Double.NaN;
    inFlightAtReport = inFlight;
    reportStampNanos = nowNanos;
    reported = true;
  }

  /** True if a report arrived within {@code ttlNanos} before {@code nowNanos}. */
  final boolean reportFresh(long nowNanos, long ttlNanos) {
    return reported && nowNanos - reportStampNanos < ttlNanos;
  }

  /**
   * Calls in flight at the target from every client, as well as this balancer knows: the fresh
   * report's count plus the calls this balancer sent since (C3's concurrency compensation, with the
   * report standing in for the other clients), never below this balancer's own count. Without a
   * fresh report, this balancer's own count.
   */
  final double fleetInFlight(long nowNanos, long ttlNanos) {
    int own = inFlight;
    if (!reportFresh(nowNanos, ttlNanos)) {
      return own;
    }
    double rif = reportedInFlight;
    if (!(rif >= 0)) {
      return own;
    }
    return Math.max(own, rif + Math.max(0, own - inFlightAtReport));
  }

  /** A window of the minimum is this many times the minimum itself (at least {@link #MIN_WINDOW_NANOS}). */
  static final int MIN_WINDOW_FACTOR = 16;
  static final long MIN_WINDOW_NANOS = 50_000_000L;

  /**
   * Feeds the windowed minimum with a successful call's latency. The minimum is the lowest sample of
   * the previous window and the current one (two buckets, as Linux's windowed min filter for BBR
   * keeps); a window lasts {@value #MIN_WINDOW_FACTOR} x the minimum (at least 50 ms), so it is
   * measured in the target's own service times at any time scale. A lower sample lowers it at once;
   * when a window ends, the minimum becomes that window's own, so a target that became ten times
   * slower for good has its new minimum within two windows, while one queued sample never becomes
   * it. Failures never come here: a fast error says nothing about the service time. Racy like the
   * EWMA: a lost sample, never a corrupt one.
   */
  void recordSuccessLatency(long sampleNanos, long nowNanos) {
    double sample = Math.max(1.0, (double) sampleNanos);
    double min = minLatencyNanos;
    if (min == 0.0) {
      minLatencyNanos = sample;
      windowMinNanos = sample;
      windowStartNanos = nowNanos;
      return;
    }
    if (nowNanos - windowStartNanos >= Math.max(MIN_WINDOW_NANOS, MIN_WINDOW_FACTOR * min)) {
      minLatencyNanos = Math.min(windowMinNanos, sample);
      windowMinNanos = sample;
      windowStartNanos = nowNanos;
      return;
    }
    if (sample < windowMinNanos) {
      windowMinNanos = sample;
    }
    if (sample < min) {
      minLatencyNanos = sample;
    }
  }

  void acquire() {
    IN_FLIGHT.incrementAndGet(this);
  }

  /** Increments in-flight only if it is below {@code limit}; false if it was at or above. */
  boolean tryAcquire(int limit) {
    return incrementBelow(IN_FLIGHT, this, limit);
  }

  /**
   * Increments {@code field} of {@code owner} only if it is below {@code limit}, by compare-and-set,
   * so concurrent callers never take it past the limit; false if it was at or above.
   */
  static <T> boolean incrementBelow(AtomicIntegerFieldUpdater<T> field, T owner, int limit) {
    for (;;) {
      int current = field.get(owner);
      if (current >= limit) {
        return false;
      }
      if (field.compareAndSet(owner, current, current + 1)) {
        return true;
      }
    }
  }

  void releaseSlot() {
    IN_FLIGHT.decrementAndGet(this);
  }

  /** Forgets the latency average: a target back in service is measured afresh. */
  void resetLatency() {
    ewmaNanos = 0;
    minLatencyNanos = 0;
    learnedConcurrency = 0;
  }

  /**
   * Peak-EWMA update: a sample above the average replaces it at once (so a slowdown is seen on the
   * next pick); one below pulls it down with weight {@code 1 - exp(-dt/tau)}, so the average forgets
   * at a rate set by time, not by call rate. Concurrent updates may lose one sample; never corrupt.
   */
  void recordLatency(long sampleNanos, long nowNanos, double tauNanos) {
    double sample = Math.max(1.0, (double) sampleNanos);
    double current = ewmaNanos;
    if (current == 0.0 || sample >= current) {
      ewmaNanos = sample;
    } else {
      double x = Math.max(0L, nowNanos - ewmaStampNanos) / tauNanos;
      // exp(-x) by its Taylor series while x is small (error below 2e-4 for x < 0.1): samples arrive
      // far more often than tau, and Math.exp would cost more than the rest of the completion.
      double w = x < 0.1 ? 1.0 - x + x * x * 0.5 - x * x * x / 6.0 : Math.exp(-x);
      ewmaNanos = current * w + sample * (1.0 - w);
    }
    ewmaStampNanos = nowNanos;
  }

  /** Steps of the decay table per time constant: the decay is read to within 0.4%. */
  static final int DECAY_STEPS_PER_TAU = 256;
  /** exp(-i / 256) for ages up to 16 time constants (beyond, a factor of 1e-7: as good as gone). */
  private static final double[] DECAY = new double[16 * DECAY_STEPS_PER_TAU];

  static {
    for (int i = 0; i < DECAY.length; i++) {
      DECAY[i] = Math.exp(-(double) i / DECAY_STEPS_PER_TAU);
    }
  }

  /**
   * The average as seen at {@code nowNanos}: it decays towards zero while no sample arrives, so a
   * target that was slow and then left alone is tried again. The factor {@code exp(-age/tau)} comes
   * from a table ({@code stepsPerNano} is {@link #DECAY_STEPS_PER_TAU} / tau, computed once per
   * balancer), which keeps {@code Math.exp} off the pick path: a pick scores every target, and an
   * idle balancer's averages are all old.
   */
  final double decayedEwma(long nowNanos, double stepsPerNano) {
    double current = ewmaNanos;
    if (current == 0.0) {
      return 0.0; // not measured yet: nothing to decay
    }
    long step = (long) ((nowNanos - ewmaStampNanos) * stepsPerNano);
    if (step <= 0) {
      return current;
    }
    return current * DECAY[(int) Math.min(step, DECAY.length - 1)];
  }
}

abstract class PeakEwmaLoadPadAfter extends PeakEwmaLoad {
  long q01, q02, q03, q04, q05, q06, q07, q08;
}
