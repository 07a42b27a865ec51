package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.t;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import org.jspecify.annotations.Nullable;

/**
 * A closed-loop fleet on a fake ticker, the fixture of the load-report simulations: {@code clients}
 * balancers of one strategy share {@code users} users (each calls again as soon as its call ends)
 * and the lab's four targets, 50, 150, 300 and 500 ms, {@value #WORKERS} workers each, first come
 * first served. Each answer carries what the {@link Reporter} says before the call succeeds.
 * Deterministic: seeded balancers on one fake ticker, events in order of end time, then of sending.
 */
final class FakeFleet {
  static final int WORKERS = 8;
  static final long[] SERVICE_MS = {50, 150, 300, 500};
  /** The limit: 8 / 0.05 + 8 / 0.15 + 8 / 0.3 + 8 / 0.5 calls per second. */
  static final double LIMIT = 256.0;
  /** Target 4's share of the capacity: 8 workers / 500 ms of 256 calls per second. */
  static final double FOUR_CAPACITY_SHARE = 16.0 / LIMIT;

  /** What a target's answer carries: {@code load} is the calls at target {@code target} (0-based), the answered one included. */
  interface Reporter {
    void report(Pick pick, int target, int load);
  }

  private final Fixtures.FakeTicker ticker;
  private final @Nullable MeterRegistry registry;
  private final long[][] workerFreeAt = new long[4][WORKERS];
  private final int[] inSystem = new int[4];
  final long[] served = new long[4];
  final List<Long> latencies = new ArrayList<>();
  private long measuredMs;

  private record Call(long endMs, long seq, long startMs, int lb, int target, Pick pick) {}

  /** {@code registry}: the balancers' meters, or null for none. */
  FakeFleet(Fixtures.FakeTicker ticker, @Nullable MeterRegistry registry) {
    this.ticker = ticker;
    this.registry = registry;
  }

  /**
   * Runs until {@code totalMs}, counting the calls that end after {@code warmupMs}; {@code
   * beforeClose} runs while the balancers are still open (their meters still registered).
   */
  void run(Strategy strategy, int clients, int users, long warmupMs, long totalMs, Reporter reporter,
      Runnable beforeClose) throws Exception {
    LoadBalancer[] lbs = new LoadBalancer[clients];
    for (int c = 0; c < clients; c++) {
      LoadBalancer.Builder b = Fixtures.builder(ticker, 42 + c).targets(t(1), t(2), t(3), t(4)).strategy(strategy);
      if (registry != null) {
        b.meterRegistry(registry);
      }
      lbs[c] = b.build();
    }
    measuredMs = totalMs - warmupMs;
    long t0 = ticker.read() / 1_000_000L;
    PriorityQueue<Call> events = new PriorityQueue<>(
        (a, b) -> a.endMs != b.endMs ? Long.compare(a.endMs, b.endMs) : Long.compare(a.seq, b.seq));
    long seq = 0;
    for (int u = 0; u < users; u++) {
      events.add(send(lbs, u % clients, 0, seq++));
    }
    while (!events.isEmpty() && events.peek().endMs <= totalMs) {
      Call c = events.poll();
      ticker.nanos.set((t0 + c.endMs) * 1_000_000L);
      int i = c.target;
      reporter.report(c.pick, i, inSystem[i]);
      c.pick.success();
      inSystem[i]--;
      if (c.endMs > warmupMs) {
        served[i]++;
        latencies.add(c.endMs - c.startMs);
      }
      events.add(send(lbs, c.lb, c.endMs, seq++));
    }
    beforeClose.run();
    for (LoadBalancer lb : lbs) {
      lb.close();
    }
  }

  private Call send(LoadBalancer[] lbs, int client, long nowMs, long seq) throws Exception {
    Pick p = lbs[client].pick();
    int i = Integer.parseInt(name(p.target())) - 1;
    long[] free = workerFreeAt[i];
    int w = 0;
    for (int k = 1; k < WORKERS; k++) {
      if (free[k] < free[w]) {
        w = k;
      }
    }
    long end = Math.max(nowMs, free[w]) + SERVICE_MS[i];
    free[w] = end;
    inSystem[i]++;
    return new Call(end, seq, nowMs, client, i, p);
  }

  long total() {
    return Arrays.stream(served).sum();
  }

  /** Calls served per second over the measured time, as a share of {@link #LIMIT}. */
  double throughput() {
    return total() / (measuredMs / 1000.0) / LIMIT;
  }

  double share(int i) {
    return (double) served[i] / total();
  }

  long p99() {
    List<Long> sorted = new ArrayList<>(latencies);
    sorted.sort(null);
    return sorted.get((int) Math.ceil(sorted.size() * 0.99) - 1);
  }
}
