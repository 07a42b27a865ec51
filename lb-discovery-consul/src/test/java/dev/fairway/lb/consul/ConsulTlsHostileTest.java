package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestCerts.dns;
import static dev.fairway.lb.consul.TestCerts.ip;
import static dev.fairway.lb.consul.TestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.consul.TestCerts.Cert;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import okhttp3.tls.HandshakeCertificates;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS review's findings, each named after its bug, and the hostile cases, all against a real TLS
 * agent on loopback with certificates made at test time ({@link TestCerts}). A refused agent ends in
 * a counted error, no ready list, and no HTTP request served: the handshake never completed.
 */
class ConsulTlsHostileTest {
  private static final Cert CA = TestCerts.ca("Consul Agent CA");
  private static final Cert OTHER_CA = TestCerts.ca("Someone else");

  @TempDir
  Path dir;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<String> logs = new CopyOnWriteArrayList<>();
  private final Logger jul = Logger.getLogger("dev.fairway.lb.consul");
  private final Handler capture = new Handler() {
    @Override
    public void publish(LogRecord r) {
      logs.add(r.getLevel() + " " + new java.util.logging.SimpleFormatter().formatMessage(r));
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  };
  private FakeConsul fake;

  ConsulTlsHostileTest() {
    jul.addHandler(capture);
  }

  @AfterEach
  void stop() {
    jul.removeHandler(capture);
    if (fake != null) {
      fake.close();
    }
  }

  private void startAgent(Cert server, boolean requireClientAuth) {
    HandshakeCertificates tls = new HandshakeCertificates.Builder().heldCertificate(server.held())
        .addTrustedCertificate(CA.certificate()).build();
    fake = FakeConsul.startTls(tls.sslSocketFactory(), requireClientAuth);
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
  }

  private Path file(String name, String content) throws Exception {
    return Files.writeString(dir.resolve(name), content);
  }

  private Path caFile() throws Exception {
    return file("ca.pem", CA.certificatePem());
  }

  private Map<String, String> env(String... nameValues) {
    Map<String, String> env = new HashMap<>();
    env.put("CONSUL_HTTP_ADDR", "127.0.0.1:" + fake.port());
    env.put("CONSUL_HTTP_SSL", "true");
    for (int i = 0; i < nameValues.length; i += 2) {
      env.put(nameValues[i], nameValues[i + 1]);
    }
    return env;
  }

  private ConsulTargetSource source(Map<String, String> env) {
    return ConsulTargetSource.builder("orders").environment(env).meterRegistry(registry).closeness(false)
        .backoff(Duration.ofMillis(50), Duration.ofMillis(200)).build();
  }

  private List<String> errorReasons() {
    return registry.find("fairway.discovery.errors").counters().stream()
        .filter(c -> c.count() > 0).map(Counter::getId).map(id -> id.getTag("reason")).distinct().toList();
  }

  private void assertServes(ConsulTargetSource s) throws Exception {
    try (s) {
      assertThat(s.whenReady().get(10, TimeUnit.SECONDS)).hasSize(1);
      assertThat(errorReasons()).isEmpty();
    }
  }

  private void assertRefused(ConsulTargetSource s, String... reasons) {
    try (s) {
      await(Duration.ofSeconds(10), "a refused handshake", () -> !errorReasons().isEmpty());
      assertThat(s.whenReady()).isNotDone();
      assertThat(errorReasons()).isSubsetOf(reasons);
      assertThat(fake.requests()).as("no request reached the agent").isEmpty();
    }
    registry.clear();
  }

  private void withServerName(Cert server, String serverName, boolean accepted) throws Exception {
    startAgent(server, false);
    ConsulTargetSource s = source(env("CONSUL_CACERT", caFile().toString(), "CONSUL_TLS_SERVER_NAME", serverName));
    if (accepted) {
      assertServes(s);
    } else {
      assertRefused(s, "certificate");
    }
    fake.close();
    fake = null;
  }

  // ---------------------------------------------------------------------------------------------
  // The review's findings

  @Test
  void ipLiteralServerName_matchesOnlyAnIpSan_neverADnsSanThatSpellsIt() throws Exception {
    withServerName(TestCerts.leaf(CA, dns("10.0.0.5")), "10.0.0.5", false);
    withServerName(TestCerts.leaf(CA, dns("*.0.0.5")), "10.0.0.5", false);
    withServerName(TestCerts.leaf(CA, ip("10.0.0.5")), "10.0.0.5", true);
  }

  @Test
  void wildcardOverASingleLabelPublicSuffix_starDotCom_isRefused() throws Exception {
    withServerName(TestCerts.leaf(CA, dns("*.com")), "a.com", false);
  }

  @Test
  void serverNameOverride_isWhatSniCarries_byIpOrHostName_andAnIpOverrideSendsNone() throws Exception {
    startAgent(TestCerts.leaf(CA, dns("server.dc1.consul"), ip("10.0.0.5")), false);
    assertServes(source(env("CONSUL_CACERT", caFile().toString(), "CONSUL_TLS_SERVER_NAME", "server.dc1.consul")));
    assertThat(fake.handshakeServerNames()).isNotEmpty().containsOnly("server.dc1.consul");
    fake.close();

    // Reached by a host name, the JDK client would send that name; the override wins here too.
    startAgent(TestCerts.leaf(CA, dns("server.dc1.consul")), false);
    Map<String, String> byName = env("CONSUL_CACERT", caFile().toString(), "CONSUL_TLS_SERVER_NAME",
        "server.dc1.consul");
    byName.put("CONSUL_HTTP_ADDR", "localhost:" + fake.port());
    assertServes(source(byName));
    assertThat(fake.handshakeServerNames()).isNotEmpty().containsOnly("server.dc1.consul");
    fake.close();

    startAgent(TestCerts.leaf(CA, ip("10.0.0.5")), false);
    assertServes(source(env("CONSUL_CACERT", caFile().toString(), "CONSUL_TLS_SERVER_NAME", "10.0.0.5")));
    assertThat(fake.handshakeServerNames()).as("SNI never carries an IP address").isNotEmpty().containsOnly("");
  }

  @Test
  void sec1EcKey_asConsulTlsCertCreateWritesIt_isAccepted() throws Exception {
    startAgent(TestCerts.leaf(CA, ip("127.0.0.1")), true);
    Cert client = TestCerts.leaf(CA, dns("client.dc1.consul"));
    assertThat(client.traditionalKeyPem()).startsWith("-----BEGIN EC PRIVATE KEY-----");
    assertServes(source(env("CONSUL_CACERT", caFile().toString(),
        "CONSUL_CLIENT_CERT", file("client.pem", client.certificatePem()).toString(),
        "CONSUL_CLIENT_KEY", file("client-key.pem", client.traditionalKeyPem()).toString())));
  }

  @Test
  void sslVerifyFalseInTheEnvironment_doesNotOverrideTheCaOrServerNameSetInCode() throws Exception {
    startAgent(TestCerts.leaf(OTHER_CA, dns("server.dc1.consul"), ip("127.0.0.1")), false);
    Map<String, String> env = Map.of("CONSUL_HTTP_SSL_VERIFY", "false");
    try (ConsulDiscovery d = ConsulDiscovery.builder().environment(env).consulUrl(fake.url())
        .caCertificate(caFile()).build()) {
      assertRefused(d.source("orders").meterRegistry(registry).closeness(false).build(), "certificate");
    }
    assertThat(logs).anyMatch(l -> l.startsWith("WARNING") && l.contains("CONSUL_HTTP_SSL_VERIFY")
        && l.contains("caCertificate"));
    fake.close();

    startAgent(TestCerts.leaf(CA, dns("server.dc1.consul")), false);
    try (ConsulDiscovery d = ConsulDiscovery.builder().environment(env).consulUrl(fake.url())
        .tlsServerName("server.dc2.consul").caCertificate(caFile()).build()) {
      assertRefused(d.source("orders").meterRegistry(registry).closeness(false).build(), "certificate");
    }
  }

  @Test
  void caPath_readsEveryFile_soACRehashFolderOfHashNamedLinksIsAccepted() throws Exception {
    startAgent(TestCerts.leaf(CA, ip("127.0.0.1")), false);
    Path cas = Files.createDirectory(dir.resolve("cas"));
    Path real = file("consul-agent-ca.pem", CA.certificatePem());
    Files.createSymbolicLink(cas.resolve("abcd1234.0"), real);
    Files.writeString(cas.resolve("ef567890.0"), OTHER_CA.certificatePem());
    assertServes(source(env("CONSUL_CAPATH", cas.toString())));
  }

  @Test
  void rejectedConsulHttpAddr_neverQuotesItsPassword() {
    Map<String, String> env = Map.of("CONSUL_HTTP_ADDR", "https://ops:s3cr3t-pw@consul.internal:8501");
    assertThatThrownBy(() -> ConsulDiscovery.builder().environment(env).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("consulUrl ($CONSUL_HTTP_ADDR)")
        .hasMessageNotContaining("s3cr3t-pw");
    assertThatThrownBy(() -> ConsulDiscovery.builder().consulUrl("https://ops:s3cr3t-pw@consul.internal:8501"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("consulUrl")
        .hasMessageNotContaining("s3cr3t-pw");
  }

  // ---------------------------------------------------------------------------------------------
  // Hostile agents

  @Test
  void expiredCertificate_isRefused() throws Exception {
    Cert expired = TestCerts.leaf(CA, TestCerts.ec(), Instant.now().minus(Duration.ofDays(2)),
        Instant.now().minus(Duration.ofDays(1)), ip("127.0.0.1"));
    startAgent(expired, false);
    assertRefused(source(env("CONSUL_CACERT", caFile().toString())), "certificate");
  }

  @Test
  void certificateFromAnotherCa_isRefused() throws Exception {
    startAgent(TestCerts.leaf(OTHER_CA, ip("127.0.0.1")), false);
    assertRefused(source(env("CONSUL_CACERT", caFile().toString())), "certificate");
  }

  @Test
  void sanForAnotherName_isRefused_withAndWithoutAServerNameOverride() throws Exception {
    startAgent(TestCerts.leaf(CA, dns("server.dc2.consul")), false);
    assertRefused(source(env("CONSUL_CACERT", caFile().toString())), "certificate");
    assertRefused(source(env("CONSUL_CACERT", caFile().toString(), "CONSUL_TLS_SERVER_NAME", "server.dc1.consul")),
        "certificate");
  }

  @Test
  void wildcardRules_starDotConsul_matchesOneLabelOnly() throws Exception {
    Cert wildcard = TestCerts.leaf(CA, dns("*.consul"));
    withServerName(wildcard, "a.consul", true);
    withServerName(wildcard, "a.b.consul", false);
    withServerName(wildcard, "consul", false);
  }

  @Test
  void ipLiteralAddress_matchesAnIpSan_notADnsSan() throws Exception {
    startAgent(TestCerts.leaf(CA, dns("127.0.0.1")), false);
    assertRefused(source(env("CONSUL_CACERT", caFile().toString())), "certificate");
    fake.close();
    startAgent(TestCerts.leaf(CA, ip("127.0.0.1")), false);
    assertServes(source(env("CONSUL_CACERT", caFile().toString())));
  }

  @Test
  void missingClientCertificate_whenTheAgentRequiresOne_isRefused() throws Exception {
    startAgent(TestCerts.leaf(CA, ip("127.0.0.1")), true);
    assertRefused(source(env("CONSUL_CACERT", caFile().toString())), "tls", "io", "certificate");
  }

  @Test
  void keyThatDoesNotMatchItsCertificate_failsAtBuild_namingTheKey() throws Exception {
    startAgent(TestCerts.leaf(CA, ip("127.0.0.1")), true);
    Cert client = TestCerts.leaf(CA, dns("client.dc1.consul"));
    Cert other = TestCerts.leaf(CA, dns("other.dc1.consul"));
    Path cert = file("client.pem", client.certificatePem());
    Path key = file("other-key.pem", other.pkcs8KeyPem());
    assertThatThrownBy(() -> source(env("CONSUL_CACERT", caFile().toString(), "CONSUL_CLIENT_CERT", cert.toString(),
        "CONSUL_CLIENT_KEY", key.toString())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("clientKey")
        .hasMessageContaining(key.toString())
        .hasMessageContaining("does not match");
    assertThat(fake.requests()).isEmpty();
  }

}
