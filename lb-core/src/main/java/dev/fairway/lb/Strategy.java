package dev.fairway.lb;

import java.time.Duration;

/**
 * How a {@link LoadBalancer} chooses a target for each call. Obtain one from the static factories;
 * each returns a fresh, stateless description, and every balancer built with it keeps its own
 * counters and tables. All selection is lock-free and allocation-free.
 *
 * <p>Sealed: only Fairway's own strategies implement it, so a balancer never meets a strategy it
 * cannot attach.
 */
public sealed interface Strategy permits BuiltinStrategy {

  /** Strict rotation over the available targets; ignores weights. */
  static Strategy roundRobin() {
    return new RoundRobinStrategy();
  }

  /**
   * Smooth weighted round robin: over every cycle each target gets exactly its weight's share, and
   * picks are interleaved (weights 5,1,1 give {@code a a b a c a a}, as nginx does), never bursts.
   */
  static Strategy weightedRoundRobin() {
    return new WeightedRoundRobinStrategy();
  }

  /** Weighted random. */
  static Strategy random() {
    return new RandomStrategy();
  }

  /**
   * Fewest in-flight calls per unit of weight; ties broken from a random start. Above 16 targets it
   * compares a random sample of 8 so a pick stays O(1).
   */
  static Strategy leastConnections() {
    return new LeastConnectionsStrategy();
  }

  /** Two distinct weighted-random targets; the one with fewer in-flight calls per weight wins. */
  static Strategy powerOfTwoChoices() {
    return new PowerOfTwoChoicesStrategy();
  }

  /**
   * Sticky keys (IP hash): a key goes to a target chosen by its hash and stays there, remembered in a
   * bounded affinity table (100,000 keys, oldest evicted), even when targets are added. A failure
   * moves the keys that were on the failed target. A {@code null} key falls back to power of two
   * choices.
   */
  static Strategy keyAffinity() {
    return new KeyAffinityStrategy(KeyAffinityStrategy.DEFAULT_MAX_KEYS);
  }

  /**
   * A hash ring with virtual nodes in proportion to weight: removing one of n targets moves only the
   * keys that were on it. An unavailable target is skipped by walking to the next target on the
   * ring. A {@code null} key falls back to power of two choices.
   */
  static Strategy consistentHash() {
    return new ConsistentHashStrategy();
  }

  /**
   * Peak-EWMA: latency average (time-decayed) times (in-flight + 1), per unit of weight; the lowest
   * score wins. Scores every target up to 16, two random ones above. Never herds: load raises the
   * score of the fastest target until the others are worth it.
   */
  static Strategy leastResponseTime() {
    return new LeastResponseTimeStrategy();
  }

  /**
   * fly.io-proxy style concurrency limits: the closest target under its soft limit (same
   * {@linkplain LoadBalancer.Builder#localZone zone} first, then lower {@link Target#roundTripNanos()
   * round-trip time} (unknown last), then lower latency), else the least
   * loaded one under its hard limit, else wait up to 1 s in a FIFO queue for a slot and then fail
   * with {@link NoTargetAvailableException}.
   *
   * @throws IllegalArgumentException unless {@code 1 <= softLimit <= hardLimit <= 1,000,000}
   */
  static Strategy concurrencyLimited(int softLimit, int hardLimit) {
    return new ConcurrencyLimitedStrategy(softLimit, hardLimit, Duration.ofSeconds(1), 1024);
  }

  /**
   * As {@link #concurrencyLimited(int, int)} with another longest wait for a slot
   * ({@code Duration.ZERO} fails at once when every target is at its hard limit).
   */
  static Strategy concurrencyLimited(int softLimit, int hardLimit, Duration maxWait) {
    return new ConcurrencyLimitedStrategy(softLimit, hardLimit, maxWait, 1024);
  }

  /**
   * Least queueing, the default: a call goes to a target with a free worker (the one with the
   * shortest service time among them), and only when every target queues, to the one where it
   * would be done first. A free worker is known from the concurrency each target showed this
   * balancer's own calls without queueing; once this balancer sees other clients' queueing on a
   * target it chooses as {@link #leastResponseTime()} does for a while. Load reports ({@link
   * Pick#reportLoad}) are not read: their claims of free workers could not be checked in a fleet. A target whose last call failed comes last. Keeps every target's workers busy
   * and puts the excess where service is fastest. Scores every target up to 16, two random ones
   * above.
   */
  static Strategy leastQueueing() {
    return new LeastQueueingStrategy();
  }

  /**
   * The strategy's name: {@code "round-robin"}, {@code "weighted-round-robin"}, {@code "random"},
   * {@code "least-connections"}, {@code "power-of-two-choices"}, {@code "key-affinity"},
   * {@code "consistent-hash"}, {@code "least-response-time"}, {@code "concurrency-limited"} or {@code "least-queueing"}.
   */
  String name();

  /** Every built-in strategy's {@link #name()}, in the order the factories above are listed. */
  static java.util.List<String> names() {
    return BuiltinStrategy.NAMES;
  }

  /** The strategy whose {@link #name()} is {@code name}, with its default settings. */
  // Arrow-switch conversion deferred: this file is being changed on another branch; converting it here would conflict.
  @SuppressWarnings("StatementSwitchToExpressionSwitch")
  static Strategy named(String name) {
    switch (name == null ? "" : name) {
      case "round-robin": return roundRobin();
      case "weighted-round-robin": return weightedRoundRobin();
      case "random": return random();
      case "least-connections": return leastConnections();
      case "power-of-two-choices": return powerOfTwoChoices();
      case "key-affinity": return keyAffinity();
      case "consistent-hash": return consistentHash();
      case "least-response-time": return leastResponseTime();
      case "concurrency-limited": return concurrencyLimited(8, 16);
      case "least-queueing": return leastQueueing();
      default:
        throw new IllegalArgumentException("strategy: " + dev.fairway.lb.internal.Args.quote(name)
            + " (expected: one of " + String.join(", ", names()) + ")");
    }
  }
}
