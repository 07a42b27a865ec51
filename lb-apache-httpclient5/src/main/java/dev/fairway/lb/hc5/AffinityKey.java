package dev.fairway.lb.hc5;

import dev.fairway.lb.internal.AffinityHeaders;
import java.util.Iterator;
import java.util.function.Function;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpRequest;
import org.jspecify.annotations.Nullable;

/**
 * Extracts the affinity key of a request, passed to every pick of its exchange ({@link
 * dev.fairway.lb.LoadBalancer#pick(String, java.util.Set)}: the first attempt and each retry) so the
 * affinity strategies ({@code keyAffinity}, {@code consistentHash}) send the same key to the same
 * target. Returns {@code null} when the request has no key; the balancer then picks without
 * affinity. The same rules as lb-okhttp's {@code AffinityKey}; one key for the classic and the
 * async client.
 *
 * <p>Example: {@code FairwayHttpClient5.builder().service("orders", orders).affinityKey(AffinityKey.header("X-User"))}.
 *
 * <p>The key is read from the request as it reaches Fairway's element of the exec chain (before
 * {@code PROTOCOL}): the headers the caller set. Headers HttpClient's protocol step adds later
 * (default headers, cookies from its {@code CookieStore}, authentication) are not seen here.
 *
 * <p>Implementations must be thread-safe and fast: they run once per balanced exchange (each
 * redirect is an exchange of its own), before the first pick. An exception thrown here reaches the
 * caller before any target was picked.
 */
@FunctionalInterface
public interface AffinityKey extends Function<HttpRequest, @Nullable String> {

  /**
   * The caller's address as a proxy reports it, read from the request's headers: the first
   * (client-most) hop of the first {@code X-Forwarded-For} header, else {@code X-Real-IP}, else
   * {@code null}. An outgoing request has no peer address of its own: this key is for a service
   * that forwards its own caller's address in these headers (an edge, a gateway), as lb-okhttp's
   * {@code AffinityKey.clientIp()} is.
   */
  static AffinityKey clientIp() {
    return request -> AffinityHeaders.clientIp(
        value(request.getFirstHeader(AffinityHeaders.FORWARDED_FOR)),
        value(request.getFirstHeader(AffinityHeaders.REAL_IP)));
  }

  /**
   * The value of the first header {@code name} (case-insensitive), or {@code null} if absent or
   * empty.
   *
   * @throws IllegalArgumentException if {@code name} is null, blank, or holds {@code ;} or {@code =}
   */
  static AffinityKey header(String name) {
    String checked = AffinityHeaders.checkName("header", name);
    return request -> AffinityHeaders.emptyToNull(value(request.getFirstHeader(checked)));
  }

  /**
   * The value of cookie {@code name} in the request's {@code Cookie} headers (the first header
   * that names it counts; a quoted value is unquoted), or {@code null} if absent or empty. Only
   * {@code Cookie} headers set on the request are read (see above).
   *
   * @throws IllegalArgumentException if {@code name} is null, blank, or holds {@code ;} or {@code =}
   */
  static AffinityKey cookie(String name) {
    String checked = AffinityHeaders.checkName("cookie", name);
    return request -> {
      for (Iterator<Header> it = request.headerIterator(AffinityHeaders.COOKIE); it.hasNext(); ) {
        String value = value(it.next());
        String cookie = value == null ? null : AffinityHeaders.cookieIn(value, checked);
        if (cookie != null) {
          return AffinityHeaders.emptyToNull(cookie);
        }
      }
      return null;
    };
  }

  private static @Nullable String value(@Nullable Header header) {
    return header == null ? null : header.getValue();
  }
}
