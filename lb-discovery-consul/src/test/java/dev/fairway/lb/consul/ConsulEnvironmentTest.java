package dev.fairway.lb.consul;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent settings the Consul CLI reads from the environment; builder options win. */
class ConsulEnvironmentTest {
  @TempDir
  Path dir;

  private static AgentConfig resolve(Map<String, String> env) {
    return ConsulDiscovery.builder().environment(env).resolve();
  }

  @Test
  void nothingSet_isTheLocalAgentOverHttp_withoutCredentials() {
    AgentConfig a = resolve(Map.of());
    assertThat(a.baseUrl()).isEqualTo("http://127.0.0.1:8500");
    assertThat(a.token()).isNull();
    assertThat(a.basicAuth()).isNull();
    assertThat(a.sslContext()).isNull();
    assertThat(a.namespace()).isNull();
  }

  @Test
  void address_hostPort_schemes_andConsulHttpSsl() {
    assertThat(resolve(Map.of("CONSUL_HTTP_ADDR", "consul.local:8500")).baseUrl()).isEqualTo("http://consul.local:8500");
    assertThat(resolve(Map.of("CONSUL_HTTP_ADDR", "consul.local:8501", "CONSUL_HTTP_SSL", "true")).baseUrl())
        .isEqualTo("https://consul.local:8501");
    assertThat(resolve(Map.of("CONSUL_HTTP_ADDR", "https://10.0.0.5:8501")).baseUrl()).isEqualTo("https://10.0.0.5:8501");
    assertThat(resolve(Map.of("CONSUL_HTTP_SSL", "1")).baseUrl()).isEqualTo("https://127.0.0.1:8500");
    assertThat(ConsulDiscovery.builder().environment(Map.of("CONSUL_HTTP_ADDR", "10.9.9.9:8500"))
        .consulUrl("http://127.0.0.1:18500").resolve().baseUrl()).as("the builder wins").isEqualTo("http://127.0.0.1:18500");
  }

  @Test
  void unixSocketAddresses_areRejectedWithTheReason() {
    assertThatThrownBy(() -> resolve(Map.of("CONSUL_HTTP_ADDR", "unix:///var/run/consul/http.sock")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("consulUrl ($CONSUL_HTTP_ADDR): \"unix:///var/run/consul/http.sock\" (expected: http(s)://host:port;"
            + " unix:// agent sockets are not supported, the JDK HTTP client cannot use them:"
            + " set the agent's addresses.http to 127.0.0.1)");
    assertThatThrownBy(() -> ConsulDiscovery.builder().consulUrl("unix:///tmp/consul.sock"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("consulUrl: \"unix:///tmp/consul.sock\"");
  }

  @Test
  void tokenFile_winsOverToken_asInConsulsGoApi_andTheBuilderWinsOverBoth() throws Exception {
    Path file = Files.writeString(dir.resolve("token"), "  file-token\n");
    assertThat(resolve(Map.of("CONSUL_HTTP_TOKEN", "env-token")).token()).isEqualTo("env-token");
    assertThat(resolve(Map.of("CONSUL_HTTP_TOKEN", "env-token", "CONSUL_HTTP_TOKEN_FILE", file.toString())).token())
        .isEqualTo("file-token");
    assertThat(ConsulDiscovery.builder().environment(Map.of("CONSUL_HTTP_TOKEN_FILE", file.toString()))
        .token("builder-token").resolve().token()).isEqualTo("builder-token");
    assertThat(ConsulDiscovery.builder().environment(Map.of("CONSUL_HTTP_TOKEN", "env-token")).tokenFile(file)
        .resolve().token()).isEqualTo("file-token");
  }

  @Test
  void badValues_failAtBuild_namingTheVariable() {
    Path missing = dir.resolve("nope");
    assertThatThrownBy(() -> resolve(Map.of("CONSUL_HTTP_TOKEN_FILE", missing.toString())))
        .hasMessage("tokenFile ($CONSUL_HTTP_TOKEN_FILE): \"" + missing + "\" (expected: a readable file holding the ACL token)");
    assertThatThrownBy(() -> resolve(Map.of("CONSUL_HTTP_SSL", "maybe")))
        .hasMessage("$CONSUL_HTTP_SSL: \"maybe\" (expected: true or false)");
    assertThatThrownBy(() -> resolve(Map.of("CONSUL_HTTP_ADDR", "https://h:1", "CONSUL_CLIENT_CERT", "/c.pem")))
        .hasMessage("clientCertificate: /c.pem, clientKey: null (expected: both or neither;"
            + " $CONSUL_CLIENT_CERT and $CONSUL_CLIENT_KEY go together)");
    assertThatThrownBy(() -> ConsulDiscovery.builder().environment(Map.of()).consulUrl("http://h:8500")
        .caCertificate(dir.resolve("ca.pem")).resolve())
        .hasMessage("consulUrl: \"http://h:8500\" (expected: an https:// address, since TLS options are set)");
    assertThatThrownBy(() -> resolve(Map.of("CONSUL_HTTP_ADDR", "https://h:1", "CONSUL_CACERT", missing.toString())))
        .hasMessage("caCertificate: " + missing + " (expected: a readable PEM certificate file)");
  }

  @Test
  void httpAuth_namespace_partition_fromTheEnvironment() {
    AgentConfig a = resolve(Map.of("CONSUL_HTTP_AUTH", "ops:pa:ss", "CONSUL_NAMESPACE", "team-a",
        "CONSUL_PARTITION", "p1"));
    assertThat(a.basicAuth()).isEqualTo("Basic " + Base64.getEncoder().encodeToString(
        "ops:pa:ss".getBytes(StandardCharsets.UTF_8)));
    assertThat(a.namespace()).isEqualTo("team-a");
    assertThat(a.partition()).isEqualTo("p1");
    assertThat(ConsulDiscovery.builder().environment(Map.of("CONSUL_HTTP_AUTH", "x:y")).httpAuth("me", "pw")
        .resolve().basicAuth()).isEqualTo("Basic " + Base64.getEncoder().encodeToString("me:pw".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void tokenFromTheEnvironment_reachesTheAgentAsAHeader_endToEnd() throws Exception {
    Path file = Files.writeString(dir.resolve("token"), "s3cret-from-file\n");
    try (FakeConsul fake = FakeConsul.start()) {
      fake.requireToken("s3cret-from-file");
      fake.register("orders", Instance.of("o1", "10.0.0.1", 80));
      try (ConsulTargetSource s = ConsulTargetSource.builder("orders").environment(Map.of(
          "CONSUL_HTTP_ADDR", "127.0.0.1:" + fake.port(), "CONSUL_HTTP_TOKEN_FILE", file.toString())).build()) {
        assertThat(s.whenReady().get(5, TimeUnit.SECONDS)).hasSize(1);
        assertThat(fake.requests()).allSatisfy(r -> {
          assertThat(r.token()).isEqualTo("s3cret-from-file");
          assertThat(r.target()).doesNotContain("s3cret");
        });
      }
    }
  }
}
