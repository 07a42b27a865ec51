package dev.fairway.lb.consul;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Decides how long the health watch waits before its next blocking query, from what the last reply
 * brought. The rule it keeps: <b>a change in the service's target list reaches the sink within
 * {@link #LATENCY_BOUND} (1 s) of Consul knowing it</b>, whatever came before it (same-list
 * wake-ups, churn, a rolling deploy, a flapping check), while a service whose index moves every few
 * milliseconds costs the agent a few reads a second, not a busy loop.
 *
 * <p>Why holding back must be short: a blocking query that is waiting in Consul returns the moment
 * the index moves, so a change that lands while a query is out is seen at once. A change that lands
 * while the watch holds its next query back is seen only when the hold ends and that query is
 * answered. So every hold is a delay for the next change, and the longest hold is the bound: each
 * hold here is at most half a second ({@link ConsulTargetSource#DEFAULT_REFILL}, {@link #FLAP_POLL}),
 * which leaves the other half for the reply to travel and be mapped.
 *
 * <ul>
 *   <li><b>A new list</b>: the next query goes out at once, so the change after it is seen as soon as
 *       Consul knows it. A rolling deploy (a change every 2 s) is delivered step by step without delay.
 *   <li><b>The same list under a new index</b> (an agent's anti-entropy sync, a check's output that
 *       changed, a hot index): a {@link TokenBucket} of {@link ConsulTargetSource#DEFAULT_BURST} (2)
 *       queries at once, then one per {@link ConsulTargetSource#DEFAULT_REFILL} (500 ms): a short
 *       fixed spacing between queries once the burst is spent. {@code rateLimit(burst, refillEvery)}
 *       changes both; a {@code refillEvery} above 500 ms delays a change by up to that much.
 *   <li><b>Real changes faster than {@link #CHANGE_BURST} at once and then one per
 *       {@link #CHANGE_REFILL}</b> (2 a second): a flapping check. Delivering each flap would make
 *       every caller rebuild its balancer and every agent answer a read for each one, so the watch
 *       damps it to polling: one query per {@link #FLAP_POLL} (500 ms) after each reply, logged once
 *       when it starts and counted in {@code fairway.discovery.throttled{reason=flapping}} for each
 *       held query. A flap is delivered at most 500 ms after it happened; the state the check settles
 *       in is delivered within that too. A polled query that Consul answers at once says the service
 *       changed during the wait; one that has to block for {@link #QUIET} (1 s) or more says it is
 *       quiet: the watch leaves polling, and that reply's change goes out at once.
 * </ul>
 *
 * <p>What each limit costs the agent. The rule: one read is the whole reply, about 1 KB of JSON per
 * instance (an entry carries its node, its service and its checks; Consul's documented example is
 * 0.8 KB), and the agent serialises it once per watching client. Reads per second multiply by the
 * reply's size and by the number of clients that watch the service.
 *
 * <ul>
 *   <li>Same-list wake-ups: at most 2 reads a second once the burst is spent. A service of 100
 *       instances: 100 KB a read, at most 200 KB/s per watching client. 1,000 instances: 1 MB a read,
 *       at most 2 MB/s per client. (The index moves without a change at least once per
 *       {@code check_update_interval} (5 min) per check: 100 instances with two checks each is a
 *       wake-up every 1.5 s, within the limit; 1,000 instances is 6.7 a second, so the limit holds
 *       such a service at the 2 reads a second.)
 *   <li>Changes: 10 reads at once, then 2 a second: at 100 instances 1 MB at once, then 200 KB/s; at
 *       1,000 instances 10 MB at once, then 2 MB/s, per client.
 *   <li>Flapping: 2 reads a second, the same 200 KB/s (100 instances) or 2 MB/s (1,000 instances) per
 *       client.
 *   <li>Together, in the worst mix (a change after every same-list wake-up, each bucket paying for
 *       its own), 4 reads a second: 400 KB/s at 100 instances, 4 MB/s at 1,000 instances per client.
 *       The old default (one same-list read per 15 s) cost a thirtieth of the same-list share, and
 *       paid for it with changes held up to 15 s. A large service watched by many clients that can
 *       live with slower changes sets {@code rateLimit(2, Duration.ofSeconds(5))} and buys a tenth of
 *       the same-list cost with up to 5 s of delay; {@code cached()} serves the reads from the agent's
 *       cache instead of the servers.
 * </ul>
 *
 * <p>Why these numbers: a deploy step typically moves the index three times (deregister, register,
 * check passing), so a deploy of one step every 2 s is 1.5 changes a second, within the 2 a second; a
 * burst of 10 covers several instances changing together. 500 ms of spacing is the longest that keeps
 * the 1 s bound with room for a large reply on a busy network.
 *
 * <p>Not thread-safe: owned by one watch, whose steps never run concurrently.
 */
final class WakeupLimiter {
  static final int CHANGE_BURST = 10;
  static final Duration CHANGE_REFILL = Duration.ofMillis(500);
  static final Duration FLAP_POLL = Duration.ofMillis(500);
  static final Duration QUIET = Duration.ofSeconds(1);
  /** The promise the limits keep: a change reaches the sink within this of Consul knowing it. */
  static final Duration LATENCY_BOUND = Duration.ofSeconds(1);

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
