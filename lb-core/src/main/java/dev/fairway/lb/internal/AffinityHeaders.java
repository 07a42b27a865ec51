package dev.fairway.lb.internal;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The one rule by which every HTTP client integration (lb-okhttp, lb-jdk-httpclient,
 * lb-apache-httpclient5) reads an affinity key from request headers: the check of a header or
 * cookie name, the client address of {@code X-Forwarded-For} / {@code X-Real-IP}, the parsing of
 * {@code Cookie} headers, and that an empty value is no key ({@code null}). Each client's {@code
 * AffinityKey} only fetches the header values from its own request type. Pure functions; not public
 * API (see the package documentation).
 */
public final class AffinityHeaders {
  /** The header {@link #clientIp} reads first. */
  public static final String FORWARDED_FOR = "X-Forwarded-For";
  /** The header {@link #clientIp} reads when {@link #FORWARDED_FOR} has no address. */
  public static final String REAL_IP = "X-Real-IP";
  /** The header {@link #cookieValue} reads. */
  public static final String COOKIE = "Cookie";

  private AffinityHeaders() {}

  /**
   * {@code name}, trimmed, if it can name a header or cookie: not null, not blank, without {@code ;}
   * or {@code =}; else {@link IllegalArgumentException} {@code field: "name" (expected: a non-blank
   * field name)}.
   */
  public static String checkName(String field, @Nullable String name) {
    if (name == null || name.isBlank() || name.indexOf(';') >= 0 || name.indexOf('=') >= 0) {
      throw new IllegalArgumentException(
          field + ": " + Args.quote(name) + " (expected: a non-blank " + field + " name)");
    }
    return name.trim();
  }

  /** {@code value}, or null when it is null or empty: an empty header is no key. */
  public static @Nullable String emptyToNull(@Nullable String value) {
    return value == null || value.isEmpty() ? null : value;
  }

  /**
   * The caller's address as a proxy reports it: the first (client-most) hop of {@code forwardedFor}
   * (the {@code X-Forwarded-For} value), trimmed, else {@code realIp} ({@code X-Real-IP}) trimmed,
   * else null when neither holds an address.
   */
  public static @Nullable String clientIp(@Nullable String forwardedFor, @Nullable String realIp) {
    if (forwardedFor != null) {
      int comma = forwardedFor.indexOf(',');
      String first = (comma < 0 ? forwardedFor : forwardedFor.substring(0, comma)).trim();
      if (!first.isEmpty()) {
        return first;
      }
    }
    return realIp == null || realIp.isBlank() ? null : realIp.trim();
  }

  /**
   * The value of cookie {@code name} in the first of {@code cookieHeaders} (the request's {@code
   * Cookie} header values, in order) that names it, unquoted; null if none names it or its value is
   * empty.
   */
  public static @Nullable String cookieValue(List<String> cookieHeaders, String name) {
    for (int h = 0, n = cookieHeaders.size(); h < n; h++) {
      String value = cookieIn(cookieHeaders.get(h), name);
      if (value != null) {
        return emptyToNull(value);
      }
    }
    return null;
  }

  /**
   * The value of cookie {@code name} in one {@code Cookie} header value ({@code a=1; b="2"}),
   * trimmed and unquoted: null if the header does not name it, {@code ""} if it names it with no
   * value. A client whose headers are not a list of strings loops over its {@code Cookie} headers,
   * stops at the first non-null result, and reads {@code ""} as no key ({@link #emptyToNull}), as
   * {@link #cookieValue} does.
   */
  public static @Nullable String cookieIn(String header, String name) {
    int pos = 0;
    int len = header.length();
    while (pos < len) {
      int end = header.indexOf(';', pos);
      if (end < 0) {
        end = len;
      }
      int eq = header.indexOf('=', pos);
      if (eq > pos && eq < end && header.substring(pos, eq).trim().equals(name)) {
        String value = header.substring(eq + 1, end).trim();
        if (value.length() >= 2 && value.charAt(0) == '"' && value.charAt(value.length() - 1) == '"') {
          value = value.substring(1, value.length() - 1);
        }
        return value;
      }
      pos = end + 1;
    }
    return null;
  }
}
