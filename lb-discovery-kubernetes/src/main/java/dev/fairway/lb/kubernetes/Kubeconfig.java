package dev.fairway.lb.kubernetes;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * A kubeconfig file, for development outside a cluster: the current (or a named) context's cluster
 * ({@code server}, {@code certificate-authority} or {@code -data}) and user ({@code token} or
 * {@code tokenFile}), and the context's namespace. Read with SnakeYAML (safe constructor), an optional
 * dependency: only this class touches it, and only when a kubeconfig is used.
 *
 * <p>Not supported, each refused at build with a message that says so: client certificates, exec and
 * auth-provider plugins, and {@code insecure-skip-tls-verify}. For those, run {@code kubectl proxy} and
 * point the builder at it ({@code apiServer("http://127.0.0.1:8001")}): kubectl then does the auth.
 */
final class Kubeconfig {
  private Kubeconfig() {}

  /** True if SnakeYAML is on the class path. */
  static boolean available() {
    try {
      Class.forName("org.yaml.snakeyaml.Yaml", false, Kubeconfig.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  static ClusterConnection load(Path file, @Nullable String contextName, @Nullable String namespace) {
    Map<?, ?> root;
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      Object doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
      if (!(doc instanceof Map<?, ?> m)) {
        throw new IllegalArgumentException("kubeconfig: " + file + " (expected: a YAML mapping)");
      }
      root = m;
    } catch (IOException | RuntimeException e) {
      if (e instanceof IllegalArgumentException iae) {
        throw iae;
      }
      throw new IllegalArgumentException("kubeconfig: " + file + " (expected: a readable kubeconfig; " + e + ")", e);
    }
    String ctxName = contextName != null ? contextName : string(root.get("current-context"));
    if (ctxName == null) {
      throw new IllegalArgumentException("kubeconfig: " + file + " has no current-context (expected: one, or"
          + " KubernetesTargetSource.Builder.kubeconfig(path, context))");
    }
    Map<?, ?> context = named(root, "contexts", ctxName, "context", file);
    String clusterName = string(context.get("cluster"));
    String userName = string(context.get("user"));
    Map<?, ?> cluster = named(root, "clusters", String.valueOf(clusterName), "cluster", file);
    String server = string(cluster.get("server"));
    if (server == null || !(server.startsWith("https://") || server.startsWith("http://"))) {
      throw new IllegalArgumentException("kubeconfig cluster " + clusterName + " server: " + server
          + " (expected: an http(s) URL)");
    }
    if (Boolean.TRUE.equals(cluster.get("insecure-skip-tls-verify"))) {
      throw new IllegalArgumentException("kubeconfig cluster " + clusterName + " insecure-skip-tls-verify: true"
          + " (expected: a certificate-authority; Fairway does not turn off server verification)");
    }
    SSLContext ssl = null;
    String caData = string(cluster.get("certificate-authority-data"));
    String caFile = string(cluster.get("certificate-authority"));
    if (caData != null) {
      ssl = ClusterConnection.trusting(new ByteArrayInputStream(Base64.getMimeDecoder().decode(caData)),
          "kubeconfig cluster " + clusterName + " certificate-authority-data");
    } else if (caFile != null) {
      ssl = ClusterConnection.trusting(relative(file, caFile), "kubeconfig cluster " + clusterName
          + " certificate-authority");
    }
    Path tokenFile = null;
    String token = null;
    if (userName != null) {
      Map<?, ?> user = named(root, "users", userName, "user", file);
      for (String unsupported : List.of("client-certificate", "client-certificate-data", "exec", "auth-provider")) {
        if (user.containsKey(unsupported)) {
          throw new IllegalArgumentException("kubeconfig user " + userName + " " + unsupported + ": not supported"
              + " (expected: token or tokenFile; or run `kubectl proxy` and set apiServer(\"http://127.0.0.1:8001\"))");
        }
      }
      token = string(user.get("token"));
      String tf = string(user.get("tokenFile"));
      if (tf != null) {
        tokenFile = relative(file, tf);
      }
    }
    String ns = namespace != null ? namespace : string(context.get("namespace"));
    return new ClusterConnection(server, ssl, tokenFile, token, ns == null || ns.isBlank() ? "default" : ns,
        "kubeconfig " + file + " context " + ctxName);
  }

  private static Path relative(Path kubeconfig, String path) {
    Path p = Path.of(path);
    Path dir = kubeconfig.toAbsolutePath().getParent();
    return p.isAbsolute() || dir == null ? p : dir.resolve(p);
  }

  /** The {@code what} mapping of the entry named {@code name} in the list {@code list}. */
  private static Map<?, ?> named(Map<?, ?> root, String list, String name, String what, Path file) {
    if (root.get(list) instanceof List<?> entries) {
      for (Object o : entries) {
        if (o instanceof Map<?, ?> entry && name.equals(entry.get("name")) && entry.get(what) instanceof Map<?, ?> m) {
          return m;
        }
      }
    }
    throw new IllegalArgumentException("kubeconfig: " + file + " has no " + what + " named \"" + name + "\"");
  }

  private static @Nullable String string(@Nullable Object o) {
    return o instanceof String s && !s.isBlank() ? s : null;
  }
}
