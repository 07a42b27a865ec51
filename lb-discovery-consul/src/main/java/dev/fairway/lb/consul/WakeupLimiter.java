package dev.fairway.lb.consul;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Decides how long the health watch waits before its next blocking query, from what the last reply
 * brought. A real change is the reason the watch exists, so it is never held back for the sake of a
 * loop that wakes up for nothing; the limits aim at the wake-ups that are not a change.
 *
 * <ul>
 *   <li><b>A new list</b>: the next query goes out at once, so the change after it is seen as soon as
 *       Consul knows it. A rolling deploy (a change every 2 s) is delivered step by step without delay.
 *   <li><b>The same list under a new index</b> (an agent's anti-entropy sync, a check's output that
 *       changed, a hot index): Consul's advice for blocking-query loops, a {@link TokenBucket} of
 *       {@link ConsulTargetSource#DEFAULT_BURST} (2) queries at once, then one per
 *       {@link ConsulTargetSource#DEFAULT_REFILL} (15 s); {@code rateLimit(burst, refillEvery)}
 *       changes both. A service whose index moves every few milliseconds costs the agent four reads
 *       a minute.
 *   <li><b>Real changes faster than {@link #CHANGE_BURST} at once and then one per
 *       {@link #CHANGE_REFILL}</b> (2 a second): a flapping check. Delivering each flap would make
 *       every caller rebuild its balancer and every agent answer a read for each one, so the watch
 *       degrades to polling: one query per {@link #FLAP_POLL} (5 s), logged once when it starts and
 *       counted in {@code fairway.discovery.throttled{reason=flapping}} for each held query. A polled
 *       query that Consul answers at once says the service changed during the wait; one that has to
 *       block for {@link #QUIET} (1 s) or more says it has been quiet for the poll interval and that
 *       second: the watch leaves polling, and that reply's change is delivered at once (the query was
 *       already waiting for it).
 * </ul>
 *
 * <p>The price of holding back same-list wake-ups: a real change that comes while the watch waits out
 * such a hold is seen when the hold ends (at most 15 s by default). Only a service whose index moves
 * without a change more than twice in a row pays it; a rolling deploy, whose wake-ups are changes,
 * does not.
 *
 * <p>Why these numbers: a deploy step typically moves the index three times (deregister, register,
 * check passing), so a deploy of one step every 2 s is 1.5 changes a second, within the 2 a second; a
 * burst of 10 covers several instances changing together. A check that flips faster than twice a
 * second for 5 s on end carries no information a balancer could use, and 5 s of polling bounds what it
 * costs to a fifth of a read a second, while its passive health still protects the callers.
 *
 * <p>Not thread-safe: owned by one watch, whose steps never run concurrently.
 */
final class WakeupLimiter {
  static final int CHANGE_BURST = 10;
  static final Duration CHANGE_REFILL = Duration.ofMillis(500);
  static final Duration FLAP_POLL = Duration.ofSeconds(5);
  static final Duration QUIET = Duration.ofSeconds(1);

  /** What {@link #afterReply} decided, for the watch to log and count. */
  enum Verdict {
    /** Query again at once. */
    AT_ONCE,
    /** The same list: held by the bucket (or sent at once while the bucket has tokens). */
    UNCHANGED,
    /** Changes churn too fast: polling; this reply started it. */
    STARTS_POLLING,
    /** Still polling. */
    POLLING,
    /** Quiet again: this change ended polling and goes out at once. */
    ENDS_POLLING
  }

  private final TokenBucket unchanged;
  private final TokenBucket changes;
  private final long pollNanos;
  private final long quietNanos;
  private final LongSupplier ticker;
  private boolean polling;
  private Verdict verdict = Verdict.AT_ONCE;

  WakeupLimiter(TokenBucket unchanged, TokenBucket changes, long pollNanos, long quietNanos, LongSupplier ticker) {
    this.unchanged = unchanged;
    this.changes = changes;
    this.pollNanos = pollNanos;
    this.quietNanos = quietNanos;
    this.ticker = ticker;
  }

  /** The defaults above, with the builder's bucket for unchanged wake-ups. */
  static WakeupLimiter of(TokenBucket unchanged, LongSupplier ticker) {
    return new WakeupLimiter(unchanged, new TokenBucket(CHANGE_REFILL.toNanos(), CHANGE_BURST, ticker),
        FLAP_POLL.toNanos(), QUIET.toNanos(), ticker);
  }

  /**
   * How long to wait before the next query, after a good reply to a query sent at {@code sentNanos};
   * {@code changed} tells whether the reply's list differs from the one before.
   */
  long afterReply(boolean changed, long sentNanos) {
    boolean ended = false;
    if (polling) {
      if (ticker.getAsLong() - sentNanos < quietNanos) { // answered at once: it changed during the wait
        verdict = Verdict.POLLING;
        return changed ? pollNanos : Math.max(pollNanos, unchanged.reserveNanos());
      }
      polling = false; // the query had to block: quiet for the poll interval and more
      ended = true;
    }
    if (!changed) {
      verdict = ended ? Verdict.ENDS_POLLING : Verdict.UNCHANGED;
      return unchanged.reserveNanos();
    }
    if (changes.tryAcquire()) {
      verdict = ended ? Verdict.ENDS_POLLING : Verdict.AT_ONCE;
      return 0;
    }
    polling = true;
    verdict = Verdict.STARTS_POLLING;
    return pollNanos;
  }

  /** What the last {@link #afterReply} decided. */
  Verdict verdict() {
    return verdict;
  }

  boolean polling() {
    return polling;
  }
}
