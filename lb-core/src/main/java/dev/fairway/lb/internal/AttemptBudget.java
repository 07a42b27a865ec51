package dev.fairway.lb.internal;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * How many attempts beyond a call's first a service may send, after Finagle's {@code RetryBudget}:
 * every original request deposits {@code percentCanRetry} of a token, every extra attempt withdraws
 * one whole token, and a reserve of {@code minRetriesPerSecond * window} tokens lets a trickle of
 * traffic retry too. Deposits and withdrawals expire after the window (10 s), so a long healthy
 * stretch does not bank attempts for the next brown-out: within any window, extra attempts stay
 * below {@code percentCanRetry * requests + minRetriesPerSecond * windowSeconds}.
 *
 * <p>An HTTP integration gives each service two budgets of this kind: one pays for retries and for
 * hedges alike, so the two together add at most its share of load; hedges also draw on one of
 * their own, deposited into by hedgeable calls only. Not public API (see the package
 * documentation).
 *
 * <p>Lock-free: the window is a ring of one-second slices of milli-tokens, each stamped with the
 * second it belongs to and reset when reused. Under contention two callers may both take the last
 * token (an overdraft of at most one token per concurrent caller); a reset racing with a deposit
 * may drop that deposit. Both err by a token or two, which a budget can afford.
 */
public final class AttemptBudget {
  public static final int WINDOW_SECONDS = 10;
  private static final long SLICE_NANOS = 1_000_000_000L;
  private static final long TOKEN = 1_000; // milli-tokens

  private final long depositMilli;
  private final long reserveMilli;
  private final LongSupplier ticker;
  private final AtomicLongArray balance = new AtomicLongArray(WINDOW_SECONDS);
  private final AtomicLongArray sliceEpoch = new AtomicLongArray(WINDOW_SECONDS);

  public AttemptBudget(double percentCanRetry, int minRetriesPerSecond, LongSupplier ticker) {
    this.depositMilli = Math.round(percentCanRetry * TOKEN);
    this.reserveMilli = (long) minRetriesPerSecond * WINDOW_SECONDS * TOKEN;
    this.ticker = ticker;
    for (int i = 0; i < WINDOW_SECONDS; i++) {
      sliceEpoch.set(i, Long.MIN_VALUE);
    }
  }

  /** An original (not retried) request. */
  public void deposit() {
    if (depositMilli != 0) {
      balance.addAndGet(slice(epochNow()), depositMilli);
    }
  }

  /** Takes one token for an extra attempt (a retry or a hedge); false (and nothing taken) if the budget is spent. */
  public boolean tryWithdraw() {
    long epoch = epochNow();
    int slot = slice(epoch);
    if (reserveMilli + sum(epoch) < TOKEN) {
      return false;
    }
    balance.addAndGet(slot, -TOKEN);
    return true;
  }

  /** Gives back a token {@link #tryWithdraw} took, for an attempt that was not made after all. */
  public void refund() {
    balance.addAndGet(slice(epochNow()), TOKEN);
  }

  /** Whole tokens available now (for tests and toString). */
  public long available() {
    long epoch = epochNow();
    return (reserveMilli + sum(epoch)) / TOKEN;
  }

  private long epochNow() {
    return Math.floorDiv(ticker.getAsLong(), SLICE_NANOS);
  }

  /** The slot of {@code epoch}, reset first if it still holds an older second. */
  private int slice(long epoch) {
    int slot = (int) Math.floorMod(epoch, (long) WINDOW_SECONDS);
    long stamped = sliceEpoch.get(slot);
    if (stamped != epoch && sliceEpoch.compareAndSet(slot, stamped, epoch)) {
      balance.set(slot, 0);
    }
    return slot;
  }

  private long sum(long epoch) {
    long total = 0;
    for (int i = 0; i < WINDOW_SECONDS; i++) {
      long stamped = sliceEpoch.get(i);
      if (stamped <= epoch && stamped > epoch - WINDOW_SECONDS) {
        total += balance.get(i);
      }
    }
    return total;
  }

  @Override
  public String toString() {
    return "AttemptBudget{percentCanRetry=" + depositMilli / (double) TOKEN + ", reserve=" + reserveMilli / TOKEN
        + ", available=" + available() + "}";
  }
}
