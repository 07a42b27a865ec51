package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.testing.Closer;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.List;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The request timers follow the balancer's tags: its name, and its bound on per-target series. */
class CallMeterTagsTest {
  private final Closer closer = new Closer();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @AfterEach
  void close() throws Exception {
    closer.close();
  }

  private static String call(OkHttpClient client) throws IOException {
    try (Response response = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      return response.code() + " " + response.body().string();
    }
  }

  private long successes(String target) {
    Timer timer = registry.find("fairway.requests").tags("target", target, "outcome", "success").timer();
    return timer == null ? -1 : timer.count();
  }

  @Test
  void requestTimers_beyondTheTargetMeterLimit_countUnderOther_andCarryTheBalancerName() throws Exception {
    Backends b = closer.add(Backends.named(3));
    MutableTargetSource source = new MutableTargetSource(List.of(b.target(0), b.target(1), b.target(2)));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").name("orders-api").targets(source)
        .strategy(Strategy.roundRobin()).targetMeterLimit(1).meterRegistry(registry).build());
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());

    for (int i = 0; i < 6; i++) {
      assertThat(call(client)).startsWith("200 ");
    }

    assertThat(successes(b.target(0).id())).isEqualTo(2);
    assertThat(successes("other")).isEqualTo(4);
    assertThat(successes(b.target(1).id())).isEqualTo(-1);
    assertThat(registry.find("fairway.requests").timers()).allSatisfy(
        t -> assertThat(t.getId().getTag("balancer")).isEqualTo("orders-api"));
    assertThat(registry.find("fairway.requests").timers()).hasSize(2);

    source.remove(b.target(2)); // a folded target leaves: the shared series stay, with their counts
    assertThat(successes("other")).isEqualTo(4);
    source.remove(b.target(0)); // the target with its own series leaves: they go
    assertThat(successes(b.target(0).id())).isEqualTo(-1);
    assertThat(call(client)).isEqualTo("200 s1");
    assertThat(successes("other")).isEqualTo(5); // target 1 joined before the slot freed: it stays folded

    lb.close();
    assertThat(registry.getMeters()).isEmpty();
  }
}
