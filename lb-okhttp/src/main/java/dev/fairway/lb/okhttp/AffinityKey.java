package dev.fairway.lb.okhttp;

import java.util.function.Function;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;

/**
 * Extracts the affinity key of a request, passed to {@link dev.fairway.lb.LoadBalancer#pick(String,
 * java.util.Set)} so the affinity strategies ({@code keyAffinity}, {@code consistentHash}) send the
 * same key to the same target. Returns {@code null} when the request has no key; the balancer then
 * picks without affinity.
 *
 * <p>Example: {@code LoadBalancingInterceptor.builder().affinityKey(AffinityKey.header("X-User"))}.
 *
 * <p>Implementations must be thread-safe and fast: they run on every balanced call.
 */
@FunctionalInterface
public interface AffinityKey extends Function<Request, @Nullable String> {

  /**
   * The caller's address as a proxy reports it: the first (client-most) hop of the first {@code
   * X-Forwarded-For} header, else the first {@code X-Real-IP} header, else {@code null}.
   */
  static AffinityKey clientIp() {
    return AffinityKeys.CLIENT_IP;
  }

  /**
   * The value of the first header {@code name} (case-insensitive), or {@code null} if absent or
   * empty. A request with the header more than once (say {@code addHeader("X-User", "a")} then
   * {@code addHeader("X-User", "b")}) gives the first value ({@code "a"}), as the JDK's and HttpClient
   * 5's {@code AffinityKey.header} do; OkHttp's own {@code Request.header(name)} would give the last.
   *
   * @throws IllegalArgumentException if {@code name} is null, blank, or holds {@code ;} or {@code =}
   */
  static AffinityKey header(String name) {
    String checked = AffinityKeys.checkName("header", name);
    return request -> AffinityKeys.emptyToNull(AffinityKeys.firstValue(request, checked));
  }

  /** The value of cookie {@code name} in the request's {@code Cookie} headers, or {@code null}. */
  static AffinityKey cookie(String name) {
    String checked = AffinityKeys.checkName("cookie", name);
    return request -> AffinityKeys.cookieValue(request, checked);
  }
}
