package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.Target;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The report, as a new user would try it, on real sockets and the default rate limit: register,
 * deregister, a check going critical, back to passing, 2 s apart. Each change must arrive long before
 * the 15 s a same-list hold could cost (the previous watch held the third and fourth for up to 11 s);
 * the bound is generous so that a slow, loaded machine still passes. Exact timing is WakeUpTest's job.
 */
class RollingDeployEndToEndTest {
  private static final Duration BOUND = Duration.ofSeconds(5);
  private final FakeConsul fake = FakeConsul.start();

  @AfterEach
  void stop() {
    fake.close();
  }

  @Test
  void fourChangesTwoSecondsApart_eachArrivesWellWithinTheHoldOfTheSameListBucket() throws Exception {
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
    try (ConsulTargetSource s = ConsulTargetSource.builder("orders").environment(Map.of()).consulUrl(fake.url())
        .closeness(false).build()) { // default wait (5 min) and default rate limit
      assertThat(s.whenReady().get(5, TimeUnit.SECONDS)).hasSize(1);

      change(s, () -> fake.register("orders", Instance.of("o2", "10.0.0.2", 8080)), t -> t.size() == 2);
      change(s, () -> fake.deregister("orders", "o1"), t -> t.size() == 1);
      change(s, () -> fake.setStatus("orders", "o2", "critical"), t -> t.size() == 1 && !t.get(0).healthy());
      change(s, () -> fake.setStatus("orders", "o2", "passing"), t -> t.size() == 1 && t.get(0).healthy());
    }
  }

  private static void change(ConsulTargetSource s, Runnable change, Predicate<List<Target>> arrived) {
    TestSupport.sleep(2_000);
    change.run();
    Duration took = await(BOUND, "the change", () -> arrived.test(s.targets()));
    System.out.printf("change arrived after %d ms%n", took.toMillis());
  }
}
