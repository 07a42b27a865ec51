package dev.fairway.lb.okhttp;

import java.util.List;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;

/** The parsing behind {@link AffinityKey}'s factories. */
final class AffinityKeys {
  static final AffinityKey CLIENT_IP = AffinityKeys::clientIp;

  private AffinityKeys() {}

  static String checkName(String field, String name) {
    if (name == null || name.isBlank() || name.indexOf(';') >= 0 || name.indexOf('=') >= 0) {
      throw new IllegalArgumentException(
          field + ": " + (name == null ? "null" : "\"" + name + "\"") + " (expected: a non-blank " + field + " name)");
    }
    return name.trim();
  }

  static @Nullable String emptyToNull(@Nullable String value) {
    return value == null || value.isEmpty() ? null : value;
  }

  private static @Nullable String clientIp(Request request) {
    String forwarded = request.header("X-Forwarded-For");
    if (forwarded != null) {
      int comma = forwarded.indexOf(',');
      String first = (comma < 0 ? forwarded : forwarded.substring(0, comma)).trim();
      if (!first.isEmpty()) {
        return first;
      }
    }
    String real = request.header("X-Real-IP");
    return real == null || real.isBlank() ? null : real.trim();
  }

  /** Cookie headers look like {@code a=1; b="2"}; there may be several. */
  static @Nullable String cookieValue(Request request, String name) {
    List<String> headers = request.headers("Cookie");
    for (int h = 0, n = headers.size(); h < n; h++) {
      String header = headers.get(h);
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
          return value.isEmpty() ? null : value;
        }
        pos = end + 1;
      }
    }
    return null;
  }
}
