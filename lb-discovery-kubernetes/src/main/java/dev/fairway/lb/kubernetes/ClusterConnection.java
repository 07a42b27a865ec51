package dev.fairway.lb.kubernetes;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.jspecify.annotations.Nullable;

/**
 * Where the API server is and how to prove who we are: its base URL, the CA that signs its certificate
 * (null: the JDK's default trust, or plain http), where the bearer token comes from, and the namespace
 * to read. Immutable; read once at build, except the token, which {@link #token()} reads again for
 * every request: a projected service-account token is bound and expiring, and the kubelet rewrites the
 * file before it expires (about hourly), so a token kept for good would stop working.
 */
final class ClusterConnection {
  /** Where a pod finds its service account: {@code token}, {@code ca.crt}, {@code namespace}. */
  static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

  private final String server; // no trailing slash
  private final @Nullable SSLContext ssl;
  private final @Nullable Path tokenFile;
  private final @Nullable String fixedToken;
  private final String namespace;
  private final String origin;

  ClusterConnection(String server, @Nullable SSLContext ssl, @Nullable Path tokenFile, @Nullable String fixedToken,
      String namespace, String origin) {
    this.server = server.endsWith("/") ? server.substring(0, server.length() - 1) : server;
    this.ssl = ssl;
    this.tokenFile = tokenFile;
    this.fixedToken = fixedToken;
    this.namespace = namespace;
    this.origin = origin;
  }

  /**
   * The in-cluster configuration, as client-go's {@code rest.InClusterConfig}: {@code https://}
   * {@code $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT}, the CA and token of the pod's service
   * account in {@code dir}; the namespace from {@code dir/namespace} unless {@code namespace} is given.
   */
  static ClusterConnection inCluster(Map<String, String> env, Path dir, @Nullable String namespace) {
    String host = env.get("KUBERNETES_SERVICE_HOST");
    String port = env.getOrDefault("KUBERNETES_SERVICE_PORT", "443");
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("KUBERNETES_SERVICE_HOST: null (expected: set in a pod)");
    }
    int p = parsePort("KUBERNETES_SERVICE_PORT", port);
    String authority = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
    Path ca = dir.resolve("ca.crt");
    Path token = dir.resolve("token");
    if (!Files.isReadable(token)) {
      throw new IllegalArgumentException("service account token: " + token + " (expected: a readable file,"
          + " mounted unless automountServiceAccountToken is false)");
    }
    String ns = namespace != null ? namespace : readNamespace(dir.resolve("namespace"));
    return new ClusterConnection("https://" + authority + ":" + p, trusting(ca, "service account ca.crt"), token, null,
        ns, "in-cluster (" + dir + ")");
  }

  static int parsePort(String field, String value) {
    try {
      int p = Integer.parseInt(value.trim());
      if (p >= 1 && p <= 65535) {
        return p;
      }
    } catch (NumberFormatException e) {
      // fall through to the message
    }
    throw new IllegalArgumentException(field + ": \"" + value + "\" (expected: 1..65535)");
  }

  private static String readNamespace(Path file) {
    try {
      String ns = Files.readString(file, StandardCharsets.UTF_8).trim();
      if (!ns.isEmpty()) {
        return ns;
      }
    } catch (IOException e) {
      // fall through to the message
    }
    throw new IllegalArgumentException("namespace file: " + file + " (expected: the pod's namespace; or set"
        + " KubernetesTargetSource.Builder.namespace)");
  }

  /** An SSL context trusting only the certificates in the PEM file {@code ca}. */
  static SSLContext trusting(Path ca, String field) {
    try (InputStream in = Files.newInputStream(ca)) {
      return trusting(in, field + " " + ca);
    } catch (IOException e) {
      throw new IllegalArgumentException(field + ": " + ca + " (expected: a readable PEM file; " + e + ")", e);
    }
  }

  /** An SSL context trusting only the PEM certificates read from {@code pem}; {@code what} names them in errors. */
  static SSLContext trusting(InputStream pem, String what) {
    try {
      Collection<? extends Certificate> certs = CertificateFactory.getInstance("X.509").generateCertificates(pem);
      if (certs.isEmpty()) {
        throw new IllegalArgumentException(what + ": no certificate (expected: PEM CERTIFICATE blocks)");
      }
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : certs) {
        store.setCertificateEntry("ca-" + i++, c);
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      SSLContext ssl = SSLContext.getInstance("TLS");
      ssl.init(null, tmf.getTrustManagers(), null);
      return ssl;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalArgumentException(what + ": unreadable certificates (" + e.getMessage() + ")", e);
    }
  }

  String server() {
    return server;
  }

  @Nullable SSLContext ssl() {
    return ssl;
  }

  String namespace() {
    return namespace;
  }

  /** Where this came from, for log lines: never the token. */
  String origin() {
    return origin;
  }

  /**
   * The bearer token for the next request, read again from its file each time (rotation); null when
   * there is none (e.g. {@code kubectl proxy}).
   *
   * @throws IOException if the token file cannot be read now
   */
  @Nullable String token() throws IOException {
    if (tokenFile != null) {
      String t = Files.readString(tokenFile, StandardCharsets.UTF_8).trim();
      return t.isEmpty() ? null : t;
    }
    return fixedToken;
  }

  @Override
  public String toString() {
    return "ClusterConnection{" + server + ", namespace=" + namespace + ", " + origin + "}";
  }
}
