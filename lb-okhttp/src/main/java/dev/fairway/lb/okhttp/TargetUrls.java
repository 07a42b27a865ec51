package dev.fairway.lb.okhttp;

import dev.fairway.lb.Target;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.HttpUrl;

/**
 * The base URLs ({@code http[s]://host:port/}) of one service's targets, canonicalized once per
 * target address: {@link HttpUrl.Builder#host} runs IDNA mapping on every call, which cost more than
 * everything else the interceptor does together. Entries of departed targets are dropped by {@link
 * #forget}; a bound keeps the cache finite even if nobody does. Thread-safe.
 */
final class TargetUrls {
  private static final int MAX_CACHED_TARGETS = 4_096;

  private final ConcurrentHashMap<String, Entry> byId = new ConcurrentHashMap<>();

  /**
   * {@code logical} with the target's host and port; scheme, user info, path and query kept.
   *
   * @throws IllegalArgumentException if OkHttp will not put the target's host in a URL
   */
  HttpUrl rewrite(HttpUrl logical, Target target) {
    HttpUrl.Builder url = base(target, logical.isHttps()).newBuilder()
        .encodedPath(logical.encodedPath())
        .encodedQuery(logical.encodedQuery());
    if (!logical.encodedUsername().isEmpty() || !logical.encodedPassword().isEmpty()) {
      url.encodedUsername(logical.encodedUsername()).encodedPassword(logical.encodedPassword());
    }
    return url.build();
  }

  private HttpUrl base(Target target, boolean https) {
    Entry cached = byId.get(target.id());
    if (cached == null || cached.port != target.port() || !cached.host.equals(target.host())) {
      cached = new Entry(target); // throws before anything is cached for an unaddressable target
      if (byId.size() >= MAX_CACHED_TARGETS) {
        byId.clear();
      }
      byId.put(target.id(), cached);
    }
    return https ? cached.https : cached.http;
  }

  /** Drops the entry of a target that left. */
  void forget(Target target) {
    byId.remove(target.id());
  }

  void clear() {
    byId.clear();
  }

  int size() {
    return byId.size();
  }

  /** A target's base URLs, keyed by target id but checked against its current address. */
  private static final class Entry {
    final String host;
    final int port;
    final HttpUrl http;
    final HttpUrl https;

    Entry(Target target) {
      this.host = target.host();
      this.port = target.port();
      this.http = new HttpUrl.Builder().scheme("http").host(host).port(port).build();
      this.https = http.newBuilder().scheme("https").port(port).build();
    }
  }
}
