package dev.fairway.lb.okhttp;

import okhttp3.Headers;
import org.jspecify.annotations.Nullable;

/**
 * The first value of a header, in the message's order: what the JDK's {@code
 * HttpHeaders.firstValue} and HttpClient 5's {@code getFirstHeader} return, so that a repeated
 * header (an affinity key, a load report) reads the same through the three clients. Not OkHttp's
 * {@code Request.header(name)} or {@code Response.header(name)}, which return the last value.
 */
final class FirstHeader {
  private FirstHeader() {}

  /** The first value of header {@code name} (case-insensitive) in {@code headers}, or null. No allocation. */
  static @Nullable String value(Headers headers, String name) {
    for (int i = 0, n = headers.size(); i < n; i++) {
      if (headers.name(i).equalsIgnoreCase(name)) {
        return headers.value(i);
      }
    }
    return null;
  }
}
