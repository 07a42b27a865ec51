package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.internal.AttemptBudget;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * Calls and hedges of one service over the last {@value #SLICES} seconds, for the extra-load gauge:
 * one-second slices stamped with their second and reset when reused, as {@link AttemptBudget} keeps
 * its tokens. Lock-free and allocation-free; a reset racing with an increment may drop that
 * increment, which a gauge can afford.
 */
public final class RecentCounts {
  public static final int SLICES = 10;
  private static final long SLICE_NANOS = 1_000_000_000L;

  private final LongSupplier ticker;
  private final AtomicLongArray calls = new AtomicLongArray(SLICES);
  private final AtomicLongArray hedges = new AtomicLongArray(SLICES);
  private final AtomicLongArray epochs = new AtomicLongArray(SLICES);

  public RecentCounts(LongSupplier ticker) {
    this.ticker = ticker;
    for (int i = 0; i < SLICES; i++) {
      epochs.set(i, Long.MIN_VALUE);
    }
  }

  public void call() {
    calls.incrementAndGet(slot(epochNow()));
  }

  public void hedge() {
    hedges.incrementAndGet(slot(epochNow()));
  }

  /** Hedges per call over the last {@value #SLICES} s; 0 when there were no calls. */
  public double extraLoad() {
    long epoch = epochNow();
    long c = 0;
    long h = 0;
    for (int i = 0; i < SLICES; i++) {
      long stamped = epochs.get(i);
      if (stamped <= epoch && stamped > epoch - SLICES) {
        c += calls.get(i);
        h += hedges.get(i);
      }
    }
    return c == 0 ? 0.0 : (double) h / c;
  }

  private long epochNow() {
    return Math.floorDiv(ticker.getAsLong(), SLICE_NANOS);
  }

  private int slot(long epoch) {
    int slot = (int) Math.floorMod(epoch, (long) SLICES);
    long stamped = epochs.get(slot);
    if (stamped != epoch && epochs.compareAndSet(slot, stamped, epoch)) {
      calls.set(slot, 0);
      hedges.set(slot, 0);
    }
    return slot;
  }
}
