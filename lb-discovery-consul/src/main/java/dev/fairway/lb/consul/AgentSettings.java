package dev.fairway.lb.consul;

import static dev.fairway.lb.internal.Args.quote;
import static dev.fairway.lb.internal.Args.requireArgument;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * The agent settings of a {@link ConsulDiscovery.Builder}: what its options set (null until set), and
 * {@link #resolve()}, which lays them over the environment the Consul CLI and HashiCorp's SDKs read,
 * reads the files they name and yields the {@link AgentConfig}. Every option set in code wins over its
 * variable. Validation of one value at a time lives here too, so that the builder's setters and the
 * environment fail alike, naming the option (or the variable) and the value. Not thread-safe.
 */
final class AgentSettings {
  private static final System.Logger LOG = System.getLogger(ConsulDiscovery.class.getName());
  static final String DEFAULT_ADDRESS = "127.0.0.1:8500";

  @Nullable String consulUrl;
  @Nullable String token;
  @Nullable Path tokenFile;
  @Nullable String httpAuth;
  @Nullable Boolean tlsVerify;
  @Nullable Path caCertificate;
  @Nullable Path caPath;
  @Nullable Path clientCertificate;
  @Nullable Path clientKey;
  @Nullable String tlsServerName;
  @Nullable String namespace;
  @Nullable String partition;
  @Nullable Map<String, String> environment;

  /** Options first, then the environment; every file is read here. */
  AgentConfig resolve() {
    Map<String, String> env = environment != null ? environment : System.getenv();
    boolean envSsl = bool(env, "CONSUL_HTTP_SSL", false);
    String base;
    if (consulUrl != null) {
      base = normalizeUrl("consulUrl", consulUrl, envSsl);
    } else {
      String addr = env(env, "CONSUL_HTTP_ADDR");
      base = normalizeUrl(addr == null ? "consulUrl" : "consulUrl ($CONSUL_HTTP_ADDR)",
          addr == null ? DEFAULT_ADDRESS : addr, envSsl);
    }
    boolean https = base.startsWith("https://");

    String secret = token;
    if (secret == null) {
      Path file = tokenFile;
      String field = "tokenFile";
      if (file == null && env(env, "CONSUL_HTTP_TOKEN_FILE") != null) {
        file = Path.of(env(env, "CONSUL_HTTP_TOKEN_FILE"));
        field = "tokenFile ($CONSUL_HTTP_TOKEN_FILE)";
      }
      if (file != null) {
        secret = readToken(field, file);
      } else {
        String fromEnv = env(env, "CONSUL_HTTP_TOKEN");
        if (fromEnv != null) {
          secret = checkToken("token ($CONSUL_HTTP_TOKEN)", fromEnv);
        }
      }
    }

    String auth = httpAuth != null ? httpAuth : env(env, "CONSUL_HTTP_AUTH");
    String basic = auth == null ? null
        : "Basic " + Base64.getEncoder().encodeToString((auth.contains(":") ? auth : auth + ":")
            .getBytes(StandardCharsets.UTF_8));

    ConsulTls.Settings tls = new ConsulTls.Settings(verify(env),
        caCertificate != null ? caCertificate : path(env, "CONSUL_CACERT"),
        caPath != null ? caPath : path(env, "CONSUL_CAPATH"),
        clientCertificate != null ? clientCertificate : path(env, "CONSUL_CLIENT_CERT"),
        clientCertificate != null ? clientKey : path(env, "CONSUL_CLIENT_KEY"),
        tlsServerName != null ? tlsServerName : env(env, "CONSUL_TLS_SERVER_NAME"));
    if ((tls.clientCert() == null) != (tls.clientKey() == null)) {
      throw new IllegalArgumentException("clientCertificate: " + tls.clientCert() + ", clientKey: " + tls.clientKey()
          + " (expected: both or neither; $CONSUL_CLIENT_CERT and $CONSUL_CLIENT_KEY go together)");
    }
    boolean tlsOptions = tlsVerify != null || caCertificate != null || caPath != null || clientCertificate != null
        || tlsServerName != null;
    if (!https && tlsOptions) {
      throw new IllegalArgumentException("consulUrl: " + quote(base)
          + " (expected: an https:// address, since TLS options are set)");
    }
    SSLContext ssl = https ? ConsulTls.context(tls) : null;

    return new AgentConfig(base, secret, basic, ssl, Duration.ofSeconds(10),
        namespace != null ? namespace : env(env, "CONSUL_NAMESPACE"),
        partition != null ? partition : env(env, "CONSUL_PARTITION"));
  }

  /**
   * Whether to verify the agent: {@link ConsulDiscovery.Builder#tlsVerify}, else
   * {@code $CONSUL_HTTP_SSL_VERIFY}; but a {@code false} from the environment does not switch off a CA
   * or server name set in code (as every other option set in code wins over its variable): it is
   * ignored, with a warning that says why.
   */
  private boolean verify(Map<String, String> env) {
    if (tlsVerify != null) {
      return tlsVerify;
    }
    boolean fromEnv = bool(env, "CONSUL_HTTP_SSL_VERIFY", true);
    if (fromEnv) {
      return true;
    }
    List<String> inCode = new ArrayList<>();
    if (caCertificate != null) {
      inCode.add("caCertificate");
    }
    if (caPath != null) {
      inCode.add("caPath");
    }
    if (tlsServerName != null) {
      inCode.add("tlsServerName");
    }
    if (inCode.isEmpty()) {
      return false;
    }
    LOG.log(Level.WARNING, "$CONSUL_HTTP_SSL_VERIFY=false is ignored: {0} set in code asks to verify the agent"
        + " (call tlsVerify(false) to switch verification off)", String.join(", ", inCode));
    return true;
  }

  private static String readToken(String field, Path file) {
    try {
      String t = Files.readString(file, StandardCharsets.UTF_8).strip();
      requireArgument(!t.isEmpty(), field, file.toString(), "a file holding the ACL token, not an empty one");
      return t;
    } catch (IOException e) {
      throw new IllegalArgumentException(field + ": " + quote(file.toString())
          + " (expected: a readable file holding the ACL token)", e);
    }
  }

  private static @Nullable String env(Map<String, String> env, String name) {
    String v = env.get(name);
    return v == null || v.isBlank() ? null : v.strip();
  }

  private static @Nullable Path path(Map<String, String> env, String name) {
    String v = env(env, name);
    return v == null ? null : Path.of(v);
  }

  /** Go's strconv.ParseBool, as the Consul CLI reads these variables. */
  private static boolean bool(Map<String, String> env, String name, boolean otherwise) {
    String v = env(env, name);
    if (v == null) {
      return otherwise;
    }
    return switch (v) {
      case "1", "t", "T", "true", "TRUE", "True" -> true;
      case "0", "f", "F", "false", "FALSE", "False" -> false;
      default -> throw new IllegalArgumentException("$" + name + ": " + quote(v) + " (expected: true or false)");
    };
  }

  /** A Consul name (namespace, partition, peer, datacenter): non-blank, no surrounding spaces. */
  static String requireName(String field, String value) {
    requireArgument(value != null && !value.isBlank() && value.equals(value.strip()), field, value,
        "a " + field + " name");
    return value;
  }

  /** The token, checked: non-blank, no surrounding spaces. The message never shows the value. */
  static String checkToken(String field, String t) {
    if (t == null || t.isBlank() || !t.equals(t.strip())) {
      throw new IllegalArgumentException(field + ": " + (t == null ? "null" : "blank or padded")
          + " (expected: a non-blank ACL token)");
    }
    return t;
  }

  /** {@code url} for a message: user information ({@code user:password@}) is never shown. */
  static String redacted(String url) {
    return url.replaceAll("(?<=://|^)[^/@?#]*@", "<user info redacted>@");
  }

  /** {@code http(s)://host:port} without a trailing slash; a bare {@code host:port} gets http or https. */
  static String normalizeUrl(String field, String url, boolean ssl) {
    String u = url.trim();
    String expected = "http(s)://host:port";
    if (u.toLowerCase(Locale.ROOT).startsWith("unix://")) {
      throw new IllegalArgumentException(field + ": " + quote(redacted(url)) + " (expected: " + expected
          + "; unix:// agent sockets are not supported, the JDK HTTP client cannot use them:"
          + " set the agent's addresses.http to 127.0.0.1)");
    }
    if (!u.contains("://")) {
      u = (ssl ? "https://" : "http://") + u;
    }
    URI uri;
    try {
      uri = new URI(u);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(field + ": " + quote(redacted(url)) + " (expected: " + expected + ")");
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null
        || uri.getRawQuery() != null || uri.getRawUserInfo() != null || !(path.isEmpty() || path.equals("/"))) {
      throw new IllegalArgumentException(field + ": " + quote(redacted(url)) + " (expected: " + expected + ")");
    }
    return scheme + "://" + uri.getRawAuthority();
  }
}
