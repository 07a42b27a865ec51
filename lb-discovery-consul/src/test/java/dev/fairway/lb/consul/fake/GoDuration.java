package dev.fairway.lb.consul.fake;

import java.time.Duration;

/** Parses Go's {@code time.ParseDuration} syntax ({@code 300ms}, {@code 1m30s}, {@code 2h45m}, {@code 0}). */
final class GoDuration {
  private GoDuration() {}

  /** @throws IllegalArgumentException on anything Go would reject */
  static Duration parse(String s) {
    if (s == null || s.isEmpty()) {
      throw new IllegalArgumentException("invalid duration \"\"");
    }
    int i = 0;
    boolean negative = false;
    if (s.charAt(0) == '-' || s.charAt(0) == '+') {
      negative = s.charAt(0) == '-';
      i++;
    }
    if (s.substring(i).equals("0")) {
      return Duration.ZERO;
    }
    if (i == s.length()) {
      throw new IllegalArgumentException("invalid duration \"" + s + "\"");
    }
    double nanos = 0;
    while (i < s.length()) {
      int start = i;
      while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
        i++;
      }
      String number = s.substring(start, i);
      if (number.isEmpty() || number.equals(".") || number.indexOf('.') != number.lastIndexOf('.')) {
        throw new IllegalArgumentException("invalid duration \"" + s + "\"");
      }
      int unitStart = i;
      while (i < s.length() && !Character.isDigit(s.charAt(i)) && s.charAt(i) != '.') {
        i++;
      }
      String unit = s.substring(unitStart, i);
      double scale;
      switch (unit) {
        case "ns":
          scale = 1;
          break;
        case "us":
        case "µs":
        case "μs":
          scale = 1e3;
          break;
        case "ms":
          scale = 1e6;
          break;
        case "s":
          scale = 1e9;
          break;
        case "m":
          scale = 60e9;
          break;
        case "h":
          scale = 3600e9;
          break;
        default:
          throw new IllegalArgumentException(
              unit.isEmpty() ? "missing unit in duration \"" + s + "\"" : "unknown unit \"" + unit + "\" in duration \"" + s + "\"");
      }
      nanos += Double.parseDouble(number) * scale;
    }
    return Duration.ofNanos((long) (negative ? -nanos : nanos));
  }
}
