package dev.fairway.lb.okhttp;

import dev.fairway.lb.HealthProbe;
import dev.fairway.lb.Target;
import java.io.IOException;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.jspecify.annotations.Nullable;

/**
 * An active health check over HTTP: a GET of {@code path} on the target, healthy if the status is
 * 2xx. Uses the given client, so its timeouts, TLS settings and connection pool apply; the probe's
 * URL names the target's own address, so a {@link LoadBalancingInterceptor} on that client lets it
 * through untouched.
 *
 * <pre>{@code
 * ActiveHealth.of(HttpHealthProbe.get(client, "/health"), Duration.ofSeconds(5))
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class HttpHealthProbe implements HealthProbe {
  private final OkHttpClient client;
  private final String scheme;
  private final String path;
  private final @Nullable String query; // null if none

  private HttpHealthProbe(OkHttpClient client, String scheme, String path, @Nullable String query) {
    this.client = client;
    this.scheme = scheme;
    this.path = path;
    this.query = query;
  }

  /**
   * A probe that sends {@code GET http://host:port/path} with {@code client}.
   *
   * @param path an absolute path, optionally with a query: {@code /health} or {@code /health?full=1}
   * @throws IllegalArgumentException if {@code client} is null or {@code path} is not absolute
   */
  public static HttpHealthProbe get(OkHttpClient client, String path) {
    if (client == null) {
      throw new IllegalArgumentException("client: null (expected: an OkHttpClient)");
    }
    if (path == null || !path.startsWith("/") || path.startsWith("//") || path.indexOf('#') >= 0) {
      throw new IllegalArgumentException("path: " + (path == null ? "null" : "\"" + path + "\"")
          + " (expected: an absolute path such as \"/health\")");
    }
    int q = path.indexOf('?');
    return new HttpHealthProbe(client, "http", q < 0 ? path : path.substring(0, q), q < 0 ? null : path.substring(q + 1));
  }

  /** This probe over HTTPS instead of HTTP. */
  public HttpHealthProbe https() {
    return new HttpHealthProbe(client, "https", path, query);
  }

  /**
   * @return true for a 2xx response, false for any other status
   * @throws IOException if the target could not be reached (which counts as a failed check)
   */
  @Override
  public boolean check(Target target) throws IOException {
    HttpUrl url = new HttpUrl.Builder()
        .scheme(scheme)
        .host(target.host())
        .port(target.port())
        .encodedPath(path)
        .encodedQuery(query)
        .build();
    try (Response response = client.newCall(new Request.Builder().url(url).get().build()).execute()) {
      return response.isSuccessful();
    }
  }

  @Override
  public String toString() {
    return "HttpHealthProbe{GET " + scheme + "://<target>" + path + (query == null ? "" : "?" + query) + "}";
  }
}
