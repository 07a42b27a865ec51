package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BuilderTest {

  @Test
  void serviceName_mustBeUsable() {
    assertThatThrownBy(() -> ConsulTargetSource.builder(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("serviceName: \" \" (expected: a Consul service name, non-blank, no '/' or surrounding spaces)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("a/b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConsulTargetSource.builder(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void consulUrl_isValidated_andABareHostPortMeansHttp() {
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").consulUrl("ftp://x:21"))
        .hasMessage("consulUrl: \"ftp://x:21\" (expected: http(s)://host:port)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").consulUrl("http://x:8500/?token=abc"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").consulUrl("http://x:8500/v1"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(AgentSettings.normalizeUrl("consulUrl", "127.0.0.1:8500", false)).isEqualTo("http://127.0.0.1:8500");
    assertThat(AgentSettings.normalizeUrl("consulUrl", "127.0.0.1:8500", true)).isEqualTo("https://127.0.0.1:8500");
    assertThat(AgentSettings.normalizeUrl("consulUrl", "HTTPS://consul.internal:8501/", false))
        .isEqualTo("https://consul.internal:8501");
    assertThat(AgentSettings.normalizeUrl("consulUrl", "http://[::1]:8500", false)).isEqualTo("http://[::1]:8500");
  }

  @Test
  void singleValuedOptions_cannotBeSetTwice_andTheMessageNamesTheFirstValue() {
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").consulUrl("http://a:1").consulUrl("http://b:1"))
        .isInstanceOf(IllegalStateException.class).hasMessage("consulUrl was already set to \"http://a:1\"");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").datacenter("a").datacenter("b"))
        .hasMessage("datacenter was already set to \"a\"");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").waitTime(Duration.ofSeconds(5)).waitTime(Duration.ofSeconds(6)))
        .hasMessage("waitTime was already set to PT5S");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").tag("v1").tag("v1"))
        .isInstanceOf(IllegalStateException.class).hasMessage("tag \"v1\" was already added");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").rateLimit(2, Duration.ofSeconds(15))
        .rateLimit(3, Duration.ofSeconds(1))).hasMessage("rateLimit was already set to \"2 per PT15S\"");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").filter("a == b").filter("c == d"))
        .hasMessage("filter was already set to \"a == b\"");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").closeness(false).closeness(true))
        .isInstanceOf(IllegalStateException.class).hasMessage("closeness was already set to false");
  }

  @Test
  void coordinatePolling_isValidated() {
    assertThatThrownBy(() -> ConsulDiscovery.builder().coordinatePolling(Duration.ZERO, Duration.ofMinutes(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("coordinatePolling minInterval: PT0S (expected: PT0.001S or more)");
    assertThatThrownBy(() -> ConsulDiscovery.builder().coordinatePolling(Duration.ofSeconds(60), Duration.ofMinutes(11)))
        .hasMessage("coordinatePolling wait: PT11M (expected: PT1S..PT10M)");
    assertThat(ConsulDiscovery.builder().coordinateInterval()).isEqualTo(Duration.ofSeconds(60));
    assertThat(ConsulDiscovery.builder().coordinateWait()).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void token_setTwice_orBlank_neverEchoesTheValue() {
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").token("secret-a").token("secret-b"))
        .isInstanceOf(IllegalStateException.class).hasMessage("token was already set")
        .message().doesNotContain("secret");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").token(" secret "))
        .hasMessage("token: blank or padded (expected: a non-blank ACL token)")
        .message().doesNotContain("secret");
  }

  @Test
  void consulUrl_defaultsToTheLocalAgent_whenTheEnvironmentNamesNone() {
    try (ConsulTargetSource s = ConsulTargetSource.builder("orders").environment(Map.of()).build()) {
      assertThat(s.toString()).contains("consul=http://127.0.0.1:8500");
    }
    threadsEnd();
  }

  @Test
  void ranges_nameTheFieldTheValueAndTheExpectation() {
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").waitTime(Duration.ofMinutes(11)))
        .hasMessage("waitTime: PT11M (expected: PT1S..PT10M)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").waitTime(Duration.ofMillis(999)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .hasMessage("backoff max: PT1S (expected: PT2S..PT1H)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").zoneMetadataKey(""))
        .hasMessage("zoneMetadataKey: \"\" (expected: a non-blank key)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").meterRegistry(null))
        .hasMessage("meterRegistry: null (expected: a MeterRegistry)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").rateLimit(0, Duration.ofSeconds(1)))
        .hasMessage("rateLimit burst: 0 (expected: 1..1000)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").stale(Duration.ofSeconds(-1)))
        .hasMessage("stale maxStale: PT-1S (expected: PT0S..PT1H)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").nodeMeta("rack:1", "x"))
        .hasMessage("nodeMeta key: \"rack:1\" (expected: a non-blank key without ':')");
  }

  /**
   * close() waited for its executors to terminate; a terminated pool's last worker may still be
   * alive for a moment on its way out of run(), so the threads get a bounded wait to be gone.
   */
  private static void threadsEnd() {
    TestSupport.await(Duration.ofSeconds(1), "every Consul thread to end", () -> TestSupport.consulThreads().isEmpty());
  }
}
