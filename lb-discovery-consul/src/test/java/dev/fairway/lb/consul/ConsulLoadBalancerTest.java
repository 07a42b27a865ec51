package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.fast;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * ConsulTargetSource -> LoadBalancer. (The path on through LoadBalancingInterceptor to two
 * MockWebServer backends lives with lb-okhttp / samples, which can reuse this module's fake.)
 */
class ConsulLoadBalancerTest {
  private final FakeConsul fake = FakeConsul.start();

  @AfterEach
  void stop() {
    fake.close();
  }

  @Test
  void deregisteredInstance_isNoLongerPicked_withinOneSecond() throws Exception {
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081));
    fake.register("orders", Instance.of("o2", "127.0.0.1", 18082));
    try (ConsulTargetSource source = fast(fake, "orders").build();
        LoadBalancer lb = LoadBalancer.builder("orders").targets(source).strategy(Strategy.roundRobin()).build()) {
      source.whenReady().get(5, TimeUnit.SECONDS);
      assertThat(picked(lb, 20)).containsExactlyInAnyOrder("o1@node-o1", "o2@node-o2");

      fake.deregister("orders", "o2");
      long deregisteredAt = System.nanoTime();
      long lastO2 = deregisteredAt;
      // Pick continuously for 1.5 s; o2 must stop appearing within 1 s of the deregistration.
      while (System.nanoTime() - deregisteredAt < TimeUnit.MILLISECONDS.toNanos(1500)) {
        Pick p = lb.pick();
        if (p.target().id().equals("o2@node-o2")) {
          lastO2 = System.nanoTime();
        }
        p.success();
        TestSupport.sleep(1);
      }
      long goneAfterMs = TimeUnit.NANOSECONDS.toMillis(lastO2 - deregisteredAt);
      assertThat(goneAfterMs).as("last pick of o2 after deregistration, ms").isLessThan(1000);
      assertThat(picked(lb, 20)).containsExactly("o1@node-o1");
      System.out.printf("deregistered o2 last picked %d ms after the change%n", goneAfterMs);
    }
  }

  @Test
  void everyInstanceCritical_panicModeStillRoutesToThem_andPassingOnlyHasNothing() throws Exception {
    // A bad deploy of the health check: every instance critical, yet they serve.
    fake.register("orders", Instance.of("o1", "127.0.0.1", 18081).withStatus("critical"));
    fake.register("orders", Instance.of("o2", "127.0.0.1", 18082).withStatus("critical"));
    try (ConsulTargetSource source = fast(fake, "orders").build();
        ConsulTargetSource passing = fast(fake, "orders").passingOnly().build();
        LoadBalancer lb = LoadBalancer.builder("orders").targets(source).strategy(Strategy.roundRobin()).build()) {
      assertThat(source.whenReady().get(5, TimeUnit.SECONDS)).extracting(t -> t.healthy()).containsExactly(false, false);
      assertThat(passing.whenReady().get(5, TimeUnit.SECONDS)).isEmpty();

      assertThat(lb.status()).extracting(s -> s.state()).containsOnly(dev.fairway.lb.TargetState.UNHEALTHY);
      assertThat(picked(lb, 20)).as("panic mode").containsExactlyInAnyOrder("o1@node-o1", "o2@node-o2");

      fake.setStatus("orders", "o1", "passing");
      TestSupport.await(java.time.Duration.ofSeconds(2), "o1 healthy again",
          () -> source.targets().stream().anyMatch(t -> t.healthy()));
      TestSupport.await(java.time.Duration.ofSeconds(2), "only o1 picked",
          () -> picked(lb, 20).equals(Set.of("o1@node-o1")));
    }
  }

  private static Set<String> picked(LoadBalancer lb, int n) {
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Pick p;
      try {
        p = lb.pick();
      } catch (dev.fairway.lb.NoTargetAvailableException e) {
        throw new AssertionError(e);
      }
      ids.add(p.target().id());
      p.success();
    }
    return ids;
  }
}
