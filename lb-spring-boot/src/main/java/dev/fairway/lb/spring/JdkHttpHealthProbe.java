package dev.fairway.lb.spring;

import dev.fairway.lb.HealthProbe;
import dev.fairway.lb.Target;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The starter's active health check: {@code GET http://host:port/path} on the target with the JDK's
 * {@link HttpURLConnection}, healthy on a 2xx answer. The JDK's client, not OkHttp, so the Spring
 * Cloud LoadBalancer path needs nothing more on the classpath; it keeps connections alive between
 * checks as the JDK does. No proxy, no redirects followed, no caches. Immutable and thread-safe.
 */
final class JdkHttpHealthProbe implements HealthProbe {
  private final String path;
  private final @Nullable String query;
  private final int timeoutMillis;

  private JdkHttpHealthProbe(String path, @Nullable String query, int timeoutMillis) {
    this.path = path;
    this.query = query;
    this.timeoutMillis = timeoutMillis;
  }

  /** A probe of {@code path} (absolute, optionally with a query) with a 1 s connect and read timeout. */
  static JdkHttpHealthProbe get(String path) {
    if (path == null || !path.startsWith("/") || path.startsWith("//") || path.indexOf('#') >= 0
        || path.chars().anyMatch(c -> c <= ' ')) {
      throw new IllegalArgumentException("path: " + (path == null ? "null" : "\"" + path + "\"")
          + " (expected: an absolute path such as /actuator/health)");
    }
    int q = path.indexOf('?');
    return new JdkHttpHealthProbe(q < 0 ? path : path.substring(0, q), q < 0 ? null : path.substring(q + 1), 1_000);
  }

  /** This probe with {@code timeout} as its connect and its read timeout (at least 1 ms). */
  JdkHttpHealthProbe withTimeout(Duration timeout) {
    long millis = Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    return new JdkHttpHealthProbe(path, query, (int) millis);
  }

  @Override
  public boolean check(Target target) throws IOException {
    HttpURLConnection connection = (HttpURLConnection) uri(target).toURL().openConnection(Proxy.NO_PROXY);
    connection.setConnectTimeout(timeoutMillis);
    connection.setReadTimeout(timeoutMillis);
    connection.setInstanceFollowRedirects(false);
    connection.setUseCaches(false);
    try {
      int status = connection.getResponseCode();
      // Read the body to its end so the connection can serve the next check.
      try (InputStream body = status < 400 ? connection.getInputStream() : connection.getErrorStream()) {
        if (body != null) {
          body.transferTo(java.io.OutputStream.nullOutputStream());
        }
      }
      return status >= 200 && status < 300;
    } catch (IOException e) {
      connection.disconnect();
      throw e;
    }
  }

  private URI uri(Target target) throws IOException {
    try {
      return new URI("http", null, target.host(), target.port(), path, query, null);
    } catch (URISyntaxException e) {
      throw new IOException("no URI for " + target.id() + " and " + path, e);
    }
  }

  @Override
  public String toString() {
    return "JdkHttpHealthProbe{GET http://<target>" + path + (query == null ? "" : "?" + query) + ", timeout="
        + timeoutMillis + "ms}";
  }
}
