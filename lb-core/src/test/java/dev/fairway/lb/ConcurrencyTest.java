package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * 4 threads x 200,000 pick/complete cycles per strategy while another thread replaces the target list
 * every millisecond. Afterwards every in-flight count, of current and of removed targets, is 0:
 * the test keeps the balancer's state of every target it was handed (a target that leaves and comes
 * back gets a fresh one, so only the departed instances themselves can show a leak).
 */
class ConcurrencyTest {
  static List<String> strategies() {
    return StrategyNames.ALL;
  }

  @ParameterizedTest
  @MethodSource("strategies")
  void picksUnderChurn_leaveNoInFlightBehind(String name) throws Exception {
    Strategy strategy = name.equals("concurrency-limited")
        ? Strategy.concurrencyLimited(2, 4, Duration.ofSeconds(2)) // 4 threads never exceed 2 targets x 4
        : Strategy.named(name);
    List<Target> pool = new ArrayList<>();
    for (int i = 1; i <= 12; i++) {
      pool.add(Target.of("10.1.0." + i, 80).withWeight(1 + i % 4).withZone(i % 2 == 0 ? "a" : "b"));
    }
    MutableTargetSource source = new MutableTargetSource(pool.subList(0, 6));
    LoadBalancer lb = LoadBalancer.builder("churn").targets(source).strategy(strategy).localZone("a")
        .passiveHealth(PassiveHealth.disabled()).build();
    // Every per-target state a pick was ever handed, removed ones included (identity set).
    java.util.Set<TrackedTarget> everPicked = java.util.concurrent.ConcurrentHashMap.newKeySet();
    AtomicReference<Throwable> escaped = new AtomicReference<>();
    AtomicLong cycles = new AtomicLong();
    long deadline = System.nanoTime() + 60_000_000_000L;
    Thread[] workers = new Thread[4];
    List<Pick> handles = java.util.Collections.synchronizedList(new ArrayList<>());
    for (int w = 0; w < workers.length; w++) {
      workers[w] = new Thread(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int n = 0; n < 200_000 && System.nanoTime() < deadline; n++) {
          try {
            Pick p = lb.pick("key-" + r.nextInt(1000));
            everPicked.add(((PickHandle) p).tracked());
            if (n % 50_000 == 0) {
              handles.add(p);
            }
            switch (r.nextInt(4)) {
              case 0: p.failure(new java.io.IOException("x")); break;
              case 1: p.release(); break;
              default: p.success();
            }
            p.success(); // a second completion must be a no-op
            cycles.incrementAndGet();
          } catch (Throwable e) {
            escaped.compareAndSet(null, e);
          }
        }
      });
      workers[w].start();
    }
    Thread churn = new Thread(() -> {
      ThreadLocalRandom r = ThreadLocalRandom.current();
      while (anyAlive(workers) && System.nanoTime() < deadline) {
        int from = r.nextInt(6);
        source.set(new ArrayList<>(pool.subList(from, from + 2 + r.nextInt(5))));
        try {
          Thread.sleep(1);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
    churn.start();
    for (Thread t : workers) {
      t.join(90_000);
    }
    churn.join(5_000);
    assertThat(escaped.get()).isNull();
    assertThat(cycles.get()).isEqualTo(800_000);
    assertThat(lb.status()).allMatch(s -> s.inFlight() == 0);
    source.set(pool);
    assertThat(lb.status()).allMatch(s -> s.inFlight() == 0);
    assertThat(handles).isNotEmpty();
    long departed = everPicked.stream().filter(t -> t.removed).count();
    assertThat(departed).as("instances of targets that left while picked").isPositive();
    assertThat(everPicked).allMatch(t -> t.inFlight() == 0, "in flight 0, removed targets included");
  }

  private static boolean anyAlive(Thread[] threads) {
    for (Thread t : threads) {
      if (t.isAlive()) {
        return true;
      }
    }
    return false;
  }
}
