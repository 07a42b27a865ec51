package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS and mutual TLS against a real TLS agent on loopback. The certificates are made at test time
 * with okhttp-tls and written as PEM files into a temporary directory, exactly what
 * {@code CONSUL_CACERT} and friends point at.
 */
class ConsulTlsTest {
  private static final HeldCertificate CA = new HeldCertificate.Builder().certificateAuthority(0)
      .commonName("Consul Agent CA").build();
  private static final HeldCertificate OTHER_CA = new HeldCertificate.Builder().certificateAuthority(0)
      .commonName("Someone else").build();

  @TempDir
  Path dir;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private FakeConsul fake;

  @AfterEach
  void stop() {
    if (fake != null) {
      fake.close();
    }
  }

  private void startAgent(HeldCertificate serverCert, boolean requireClientAuth) {
    HandshakeCertificates server = new HandshakeCertificates.Builder().heldCertificate(serverCert)
        .addTrustedCertificate(CA.certificate()).build();
    fake = FakeConsul.startTls(server.sslSocketFactory(), requireClientAuth);
    fake.register("orders", Instance.of("o1", "10.0.0.1", 8080));
  }

  private static HeldCertificate serverCertificate(String... names) {
    HeldCertificate.Builder b = new HeldCertificate.Builder().signedBy(CA).commonName("server.dc1.consul");
    for (String n : names) {
      b.addSubjectAlternativeName(n);
    }
    return b.build();
  }

  private Path pem(String name, String content) throws Exception {
    return Files.writeString(dir.resolve(name), content);
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
    return ConsulTargetSource.builder("orders").environment(env).meterRegistry(registry)
        .backoff(Duration.ofMillis(50), Duration.ofMillis(200)).build();
  }

  private List<String> errorReasons() {
    return registry.find("fairway.discovery.errors").counters().stream()
        .filter(c -> c.count() > 0).map(Counter::getId).map(id -> id.getTag("reason")).distinct().toList();
  }

  private void assertServes(ConsulTargetSource s) throws Exception {
    assertThat(s.whenReady().get(10, TimeUnit.SECONDS)).hasSize(1);
    assertThat(registry.find("fairway.discovery.errors").counters()).isEmpty();
  }

  private void assertRefused(ConsulTargetSource s, String... reasons) {
    await(Duration.ofSeconds(10), "a refused handshake", () -> !errorReasons().isEmpty());
    assertThat(s.whenReady()).isNotDone();
    List<String> either = new java.util.ArrayList<>();
    for (String r : reasons) { // the coordinate watch shares the connection setup, so it is refused alike
      either.add(r);
      either.add("coordinates_" + r);
    }
    assertThat(errorReasons()).isSubsetOf(either);
  }

  @Test
  void caCert_verifiesTheAgent_andWithoutItTheCertificateIsRefused() throws Exception {
    startAgent(serverCertificate("127.0.0.1"), false);
    Path ca = pem("ca.pem", CA.certificatePem());
    try (ConsulTargetSource s = source(env("CONSUL_CACERT", ca.toString()))) {
      assertServes(s);
      assertThat(s.toString()).contains("consul=https://127.0.0.1:" + fake.port());
    }
    try (ConsulTargetSource s = source(env())) {
      assertRefused(s, "certificate");
    }
  }

  @Test
  void caPath_aDirectoryOfCas_isTrusted() throws Exception {
    startAgent(serverCertificate("127.0.0.1"), false);
    Path cas = Files.createDirectory(dir.resolve("cas"));
    Files.writeString(cas.resolve("other.pem"), OTHER_CA.certificatePem());
    Files.writeString(cas.resolve("consul.crt"), CA.certificatePem());
    Files.writeString(cas.resolve("README"), "not a certificate, not read");
    try (ConsulTargetSource s = source(env("CONSUL_CAPATH", cas.toString()))) {
      assertServes(s);
    }
  }

  @Test
  void tlsServerName_checksTheCertificateAgainstThatName_insteadOfTheAddress() throws Exception {
    startAgent(serverCertificate("server.dc1.consul"), false); // no IP in the certificate
    Path ca = pem("ca.pem", CA.certificatePem());
    try (ConsulTargetSource s = source(env("CONSUL_CACERT", ca.toString(), "CONSUL_TLS_SERVER_NAME", "server.dc1.consul"))) {
      assertServes(s);
    }
    try (ConsulTargetSource s = source(env("CONSUL_CACERT", ca.toString()))) {
      assertRefused(s, "certificate"); // 127.0.0.1 is not in the certificate
    }
    try (ConsulTargetSource s = source(env("CONSUL_CACERT", ca.toString(), "CONSUL_TLS_SERVER_NAME", "server.dc2.consul"))) {
      assertRefused(s, "certificate");
    }
  }

  @Test
  void sslVerifyFalse_acceptsAnyCertificate() throws Exception {
    startAgent(serverCertificate("somewhere.else"), false);
    try (ConsulTargetSource s = source(env("CONSUL_HTTP_SSL_VERIFY", "false"))) {
      assertServes(s);
    }
  }

  @Test
  void mutualTls_clientCertificateAndPkcs8Key_fromTheEnvironment_andRefusedWithout() throws Exception {
    startAgent(serverCertificate("127.0.0.1"), true);
    HeldCertificate client = new HeldCertificate.Builder().signedBy(CA).commonName("fairway").build();
    Path ca = pem("ca.pem", CA.certificatePem());
    Path cert = pem("client.pem", client.certificatePem());
    Path key = pem("client-key.pem", client.privateKeyPkcs8Pem());
    try (ConsulTargetSource s = source(env("CONSUL_CACERT", ca.toString(), "CONSUL_CLIENT_CERT", cert.toString(),
        "CONSUL_CLIENT_KEY", key.toString()))) {
      assertServes(s);
    }
    try (ConsulTargetSource s = source(env("CONSUL_CACERT", ca.toString()))) {
      assertRefused(s, "tls", "io", "certificate");
    }
  }

  @Test
  void mutualTls_rsaPkcs1Key_throughBuilderOptions_whichWinOverTheEnvironment() throws Exception {
    startAgent(serverCertificate("127.0.0.1"), true);
    java.security.KeyPairGenerator rsa = java.security.KeyPairGenerator.getInstance("RSA");
    rsa.initialize(1024); // small for the test's speed; the key format, not its strength, is under test
    HeldCertificate client = new HeldCertificate.Builder().signedBy(CA).keyPair(rsa.generateKeyPair())
        .commonName("fairway").build();
    Path ca = pem("ca.pem", CA.certificatePem());
    Path wrongCa = pem("wrong.pem", OTHER_CA.certificatePem());
    Path cert = pem("client.pem", client.certificatePem());
    Path key = pem("client-key.pem", client.privateKeyPkcs1Pem());
    try (ConsulDiscovery discovery = ConsulDiscovery.builder()
        .environment(Map.of("CONSUL_CACERT", wrongCa.toString()))
        .consulUrl("https://127.0.0.1:" + fake.port())
        .caCertificate(ca)
        .clientCertificate(cert, key)
        .build()) {
      ConsulTargetSource s = discovery.source("orders").meterRegistry(registry).build();
      assertServes(s);
    }
  }
}
