package dev.fairway.lb.okhttp;

import dev.fairway.lb.internal.AffinityHeaders;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;

/**
 * The OkHttp side of {@link AffinityKey}'s factories: reads the headers from a {@link Request}; the
 * rule (name check, client address, cookie parsing, empty is no key) is lb-core's {@link
 * AffinityHeaders}, shared with the JDK and HttpClient 5 adapters.
 */
final class AffinityKeys {
  static final AffinityKey CLIENT_IP = AffinityKeys::clientIp;

  private AffinityKeys() {}

  static String checkName(String field, String name) {
    return AffinityHeaders.checkName(field, name);
  }

  static @Nullable String emptyToNull(@Nullable String value) {
    return AffinityHeaders.emptyToNull(value);
  }

  private static @Nullable String clientIp(Request request) {
    return AffinityHeaders.clientIp(
        firstValue(request, AffinityHeaders.FORWARDED_FOR), firstValue(request, AffinityHeaders.REAL_IP));
  }

  /** The first value of header {@code name} in the request ({@link FirstHeader}), or null. */
  static @Nullable String firstValue(Request request, String name) {
    return FirstHeader.value(request.headers(), name);
  }

  /** Cookie headers look like {@code a=1; b="2"}; there may be several: the first that names the cookie counts. */
  static @Nullable String cookieValue(Request request, String name) {
    return AffinityHeaders.cookieValue(request.headers(AffinityHeaders.COOKIE), name);
  }
}
