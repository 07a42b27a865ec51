package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.ActiveHealth;
import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetState;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;

class HttpHealthProbeTest {

  @Test
  void check_isTrueFor2xxAndFalseOtherwise() throws Exception {
    try (Backends b = Backends.start(3, i -> request -> new MockResponse.Builder().code(i == 0 ? 200 : i == 1 ? 204 : 503).build())) {
      HttpHealthProbe probe = HttpHealthProbe.get(b.client(null), "/health?deep=1");

      assertThat(probe.check(b.target(0))).isTrue();
      assertThat(probe.check(b.target(1))).isTrue();
      assertThat(probe.check(b.target(2))).isFalse();
      RecordedRequest r = b.servers.get(0).takeRequest(2, TimeUnit.SECONDS);
      assertThat(r.getMethod()).isEqualTo("GET");
      assertThat(r.getUrl().encodedPath()).isEqualTo("/health");
      assertThat(r.getUrl().queryParameter("deep")).isEqualTo("1");
    }
  }

  @Test
  void check_throwsWhenTargetRefusesConnection() throws Exception {
    try (Backends b = Backends.named(1)) {
      OkHttpClient client = b.client(null);
      b.kill(0);
      assertThatThrownBy(() -> HttpHealthProbe.get(client, "/health").check(b.target(0))).isInstanceOf(IOException.class);
    }
  }

  @Test
  void activeHealth_marksTargetUnhealthyThroughProbe() throws Exception {
    try (Backends b = Backends.start(2, i -> request -> new MockResponse.Builder().code(i == 0 ? 200 : 500).build())) {
      HttpHealthProbe probe = HttpHealthProbe.get(b.client(null), "/health");
      try (LoadBalancer lb = LoadBalancer.builder("orders").targets(b.targets())
          .activeHealth(ActiveHealth.of(probe, Duration.ofMillis(50))).build()) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (lb.status().get(1).state() != TargetState.UNHEALTHY && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        assertThat(lb.status().get(1).state()).isEqualTo(TargetState.UNHEALTHY);
        assertThat(lb.status().get(0).state()).isEqualTo(TargetState.HEALTHY);
      }
    }
  }

  @Test
  void get_rejectsRelativePathAndNullClient() {
    OkHttpClient client = new OkHttpClient();
    assertThatThrownBy(() -> HttpHealthProbe.get(client, "health"))
        .hasMessage("path: \"health\" (expected: an absolute path such as \"/health\")");
    assertThatThrownBy(() -> HttpHealthProbe.get(null, "/health"))
        .hasMessage("client: null (expected: an OkHttpClient)");
  }
}
