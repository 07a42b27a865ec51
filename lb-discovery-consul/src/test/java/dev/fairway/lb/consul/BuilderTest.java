package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
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
        .hasMessage("consulUrl: ftp://x:21 (expected: http(s)://host:port)");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").consulUrl("http://x:8500/?token=abc"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(ConsulTargetSource.normalizeUrl("consulUrl", "127.0.0.1:8500")).isEqualTo("http://127.0.0.1:8500");
    assertThat(ConsulTargetSource.normalizeUrl("consulUrl", "https://consul.internal:8501/"))
        .isEqualTo("https://consul.internal:8501");
  }

  @Test
  void singleValuedOptions_cannotBeSetTwice() {
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").consulUrl("http://a:1").consulUrl("http://b:1"))
        .isInstanceOf(IllegalStateException.class).hasMessage("consulUrl was already set");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").datacenter("a").datacenter("b"))
        .hasMessage("datacenter was already set");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").token("a").token("b"))
        .hasMessage("token was already set");
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").tag("v1").tag("v1"))
        .hasMessage("tag: v1 was already added");
  }

  @Test
  void token_messageNeverEchoesTheValue() {
    assertThatThrownBy(() -> ConsulTargetSource.builder("s").token(" secret "))
        .hasMessage("token: blank or padded (expected: a non-blank ACL token)")
        .message().doesNotContain("secret");
  }

  @Test
  void consulUrl_defaultsToTheLocalAgent_whenCONSUL_HTTP_ADDRIsUnset() {
    org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("CONSUL_HTTP_ADDR") == null,
        "CONSUL_HTTP_ADDR is set; the default is not in play");
    try (ConsulTargetSource s = ConsulTargetSource.builder("orders").build()) {
      assertThat(s.toString()).contains("consul=http://127.0.0.1:8500");
    }
    assertThat(TestSupport.consulThreads()).isEmpty();
  }

  @Test
  void waitAndBackoff_ranges() {
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
  }
}
