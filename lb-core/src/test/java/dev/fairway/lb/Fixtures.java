package dev.fairway.lb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** Shared helpers: targets named by their last octet, a fake ticker, pick loops. */
final class Fixtures {
  private Fixtures() {}

  static Target t(int n) {
    return Target.of("10.0.0." + n, 8080);
  }

  static List<Target> targets(int count) {
    List<Target> out = new ArrayList<>();
    for (int i = 1; i <= count; i++) {
      out.add(t(i));
    }
    return out;
  }

  /** "3" for 10.0.0.3. */
  static String name(Target target) {
    String h = target.host();
    return h.substring(h.lastIndexOf('.') + 1);
  }

  static final class FakeTicker {
    final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    long read() {
      return nanos.get();
    }

    void advanceMillis(long ms) {
      nanos.addAndGet(ms * 1_000_000L);
    }
  }

  static LoadBalancer.Builder builder(FakeTicker ticker, long seed) {
    return LoadBalancer.builder("svc").ticker(ticker::read).random(RandomSource.seeded(seed));
  }

  /** Picks n times completing each with success; returns the names in order. */
  static List<String> sequence(LoadBalancer lb, int n) throws NoTargetAvailableException {
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Pick p = lb.pick();
      out.add(name(p.target()));
      p.success();
    }
    return out;
  }

  static Map<String, Integer> counts(List<String> names) {
    Map<String, Integer> m = new HashMap<>();
    for (String s : names) {
      m.merge(s, 1, Integer::sum);
    }
    return m;
  }

  static int inFlight(LoadBalancer lb, Target target) {
    return lb.status().stream().filter(s -> s.target().equals(target)).findFirst().orElseThrow().inFlight();
  }

  /**
   * True once the published snapshot, which picks read, lets {@code target} take calls. A health
   * change is visible in {@link LoadBalancer#status()} a moment before the snapshot that follows it
   * is published (by whichever thread applies changes), so tests that pick after waiting for a state
   * wait for this too.
   */
  static boolean pickable(LoadBalancer lb, Target target) {
    for (TrackedTarget t : lb.published().snapshot.pickable) {
      if (t.target.equals(target)) {
        return true;
      }
    }
    return false;
  }

  static TargetState state(LoadBalancer lb, Target target) {
    return lb.status().stream().filter(s -> s.target().equals(target)).findFirst().orElseThrow().state();
  }
}
