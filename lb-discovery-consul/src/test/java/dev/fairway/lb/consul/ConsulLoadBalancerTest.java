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
      assertThat(picked(lb, 20)).containsExactlyInAnyOrder("o1", "o2");

      fake.deregister("orders", "o2");
      long deregisteredAt = System.nanoTime();
      long lastO2 = deregisteredAt;
      // Pick continuously for 1.5 s; o2 must stop appearing within 1 s of the deregistration.
      while (System.nanoTime() - deregisteredAt < TimeUnit.MILLISECONDS.toNanos(1500)) {
        Pick p = lb.pick();
        if (p.target().id().equals("o2")) {
          lastO2 = System.nanoTime();
        }
        p.success();
        TestSupport.sleep(1);
      }
      long goneAfterMs = TimeUnit.NANOSECONDS.toMillis(lastO2 - deregisteredAt);
      assertThat(goneAfterMs).as("last pick of o2 after deregistration, ms").isLessThan(1000);
      assertThat(picked(lb, 20)).containsExactly("o1");
      System.out.printf("deregistered o2 last picked %d ms after the change%n", goneAfterMs);
    }
  }

  private static Set<String> picked(LoadBalancer lb, int n) throws Exception {
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Pick p = lb.pick();
      ids.add(p.target().id());
      p.success();
    }
    return ids;
  }
}
