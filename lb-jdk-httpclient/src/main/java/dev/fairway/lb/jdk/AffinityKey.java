package dev.fairway.lb.jdk;

import dev.fairway.lb.internal.AffinityHeaders;
import java.net.http.HttpRequest;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Extracts the affinity key of a request, passed to every pick of its call ({@link
 * dev.fairway.lb.LoadBalancer#pick(String, java.util.Set)}: the first attempt and each retry) so the
 * affinity strategies ({@code keyAffinity}, {@code consistentHash}) send the same key to the same
 * target. Returns {@code null} when the request has no key; the balancer then picks without
 * affinity. The same rules as lb-okhttp's {@code AffinityKey}.
 *
 * <p>Example: {@code FairwayHttpClient.builder(client).service("orders", orders).affinityKey(AffinityKey.header("X-User"))}.
 *
 * <p>The key is read from the {@link HttpRequest} the caller passes to {@code send}/{@code
 * sendAsync}: its own headers only. Headers the JDK's client adds while sending (cookies from its
 * {@link java.net.CookieHandler}, authentication) are added below Fairway and never seen here.
 *
 * <p>Implementations must be thread-safe and fast: they run once per balanced call, on the caller's
 * thread, before the first pick. An exception thrown here reaches the caller before any target was
 * picked.
 */
@FunctionalInterface
public interface AffinityKey extends Function<HttpRequest, @Nullable String> {

  /**
   * The caller's address as a proxy reports it, read from the request's headers: the first
   * (client-most) hop of the first {@code X-Forwarded-For} header, else {@code X-Real-IP}, else
   * {@code null}. The JDK's request is an outgoing one and has no peer address of its own: this
   * key is for a service that forwards its own caller's address in these headers (an edge, a
   * gateway), as lb-okhttp's {@code AffinityKey.clientIp()} is.
   */
  static AffinityKey clientIp() {
    return request -> AffinityHeaders.clientIp(
        request.headers().firstValue(AffinityHeaders.FORWARDED_FOR).orElse(null),
        request.headers().firstValue(AffinityHeaders.REAL_IP).orElse(null));
  }

  /**
   * The value of the first header {@code name} (case-insensitive), or {@code null} if absent or
   * empty.
   *
   * @throws IllegalArgumentException if {@code name} is null, blank, or holds {@code ;} or {@code =}
   */
  static AffinityKey header(String name) {
    String checked = AffinityHeaders.checkName("header", name);
    return request -> AffinityHeaders.emptyToNull(request.headers().firstValue(checked).orElse(null));
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
    return request -> AffinityHeaders.cookieValue(request.headers().allValues(AffinityHeaders.COOKIE), checked);
  }
}
