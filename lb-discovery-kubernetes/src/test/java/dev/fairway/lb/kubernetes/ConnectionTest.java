package dev.fairway.lb.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the API server is: in a pod, from a kubeconfig, or given; and what is refused at build. */
class ConnectionTest {
  private static final String CA = new HeldCertificate.Builder().certificateAuthority(0).commonName("kube-ca").build()
      .certificatePem();

  @Test
  void inCluster_readsTheServiceAccount_andRereadsTheToken(@TempDir Path sa) throws Exception {
    Files.writeString(sa.resolve("ca.crt"), CA);
    Files.writeString(sa.resolve("token"), "first\n");
    Files.writeString(sa.resolve("namespace"), "shop\n");
    ClusterConnection c = ClusterConnection.inCluster(
        Map.of("KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443"), sa, null);
    assertThat(c.server()).isEqualTo("https://10.96.0.1:443");
    assertThat(c.namespace()).isEqualTo("shop");
    assertThat(c.ssl()).isNotNull();
    assertThat(c.token()).isEqualTo("first");
    Files.writeString(sa.resolve("token"), "second\n");
    assertThat(c.token()).isEqualTo("second");

    ClusterConnection v6 = ClusterConnection.inCluster(
        Map.of("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", "KUBERNETES_SERVICE_PORT", "6443"), sa, "other");
    assertThat(v6.server()).isEqualTo("https://[fd00:10:96::1]:6443");
    assertThat(v6.namespace()).isEqualTo("other");
  }

  @Test
  void inCluster_failsAtBuild_namingWhatIsMissing(@TempDir Path sa) throws Exception {
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").environment(Map.of(
        "KUBERNETES_SERVICE_HOST", "10.96.0.1")).serviceAccountDir(sa).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("service account token: " + sa.resolve("token") + " (expected: a readable file, mounted unless"
            + " automountServiceAccountToken is false)");
    Files.writeString(sa.resolve("token"), "t");
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").environment(Map.of(
        "KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "https")).serviceAccountDir(sa).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("KUBERNETES_SERVICE_PORT: \"https\" (expected: 1..65535)");
  }

  @Test
  void kubeconfig_currentContext_withCaData_andAToken(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("config");
    Files.writeString(file, """
        apiVersion: v1
        kind: Config
        current-context: dev
        clusters:
        - name: kind-dev
          cluster:
            server: https://127.0.0.1:6443
            certificate-authority-data: %s
        users:
        - name: dev-user
          user:
            token: abc123
        contexts:
        - name: dev
          context: {cluster: kind-dev, user: dev-user, namespace: shop}
        - name: other
          context: {cluster: kind-dev, user: dev-user}
        """.formatted(Base64.getEncoder().encodeToString(CA.getBytes(StandardCharsets.US_ASCII))));
    ClusterConnection c = Kubeconfig.load(file, null, null);
    assertThat(c.server()).isEqualTo("https://127.0.0.1:6443");
    assertThat(c.namespace()).isEqualTo("shop");
    assertThat(c.token()).isEqualTo("abc123");
    assertThat(c.ssl()).isNotNull();
    assertThat(Kubeconfig.load(file, "other", null).namespace()).isEqualTo("default");
  }

  @Test
  void kubeconfig_refusesWhatItCannotDo_withAWayOut(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("config");
    Files.writeString(file, """
        current-context: dev
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
        users: [{name: u, user: {client-certificate-data: AAAA, client-key-data: AAAA}}]
        contexts: [{name: dev, context: {cluster: c, user: u}}]
        """);
    assertThatThrownBy(() -> Kubeconfig.load(file, null, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kubeconfig user u client-certificate-data: not supported (expected: token or tokenFile; or run"
            + " `kubectl proxy` and set apiServer(\"http://127.0.0.1:8001\"))");
    assertThatThrownBy(() -> Kubeconfig.load(file, "prod", null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kubeconfig: " + file + " has no context named \"prod\"");
  }

  @Test
  void builder_namesTheFieldAndTheValue() {
    assertThatThrownBy(() -> KubernetesTargetSource.builder("Orders"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("serviceName: \"Orders\" (expected: a Kubernetes Service name");
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").port(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("port: 0 (expected: 1..65535)");
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").port(80).portName("http"))
        .isInstanceOf(IllegalStateException.class).hasMessage("port was already set to 80");
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").namespace("a").namespace("b"))
        .isInstanceOf(IllegalStateException.class).hasMessage("namespace was already set to \"a\"");
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").apiServer("ftp://x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("apiServer: \"ftp://x\" (expected: an http or https URL");
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").watchTimeout(java.time.Duration.ofMillis(1500)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("watchTimeout: PT1.5S (expected: whole seconds, PT1S..PT1H)");
    assertThatThrownBy(() -> KubernetesTargetSource.builder("orders").environment(Map.of()).token("secret").build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("token, tokenFile and caCertificate go with apiServer, which was not set");
  }
}
