package dev.fairway.lb;

import static dev.fairway.lb.internal.Args.quote;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One instance of a service that calls can be sent to: a host, a port, a weight, a zone and free-form
 * metadata. Immutable; equality and hash code use {@link #id()} only, so two targets with the same id
 * are the same instance even if one carries a newer weight.
 *
 * <p>Example: {@code Target.of("10.0.0.7", 8080).withWeight(3).withZone("eu-west-1a")}.
 *
 * <p>Thread-safe (immutable). No method accepts or returns {@code null}.
 */
public final class Target {
  /** The largest weight a target may have. */
  public static final int MAX_WEIGHT = 1_000_000;

  private final String id;
  private final String host;
  private final int port;
  private final int weight;
  private final String zone;
  private final Map<String, String> metadata;
  private final boolean healthy;
  /** Estimated round-trip time from the caller in nanoseconds, or -1 when unknown. */
  private final long roundTripNanos;

  private Target(
      String id,
      String host,
      int port,
      int weight,
      String zone,
      Map<String, String> metadata,
      boolean healthy,
      long roundTripNanos) {
    this.id = id;
    this.host = host;
    this.port = port;
    this.weight = weight;
    this.zone = zone;
    this.metadata = metadata;
    this.healthy = healthy;
    this.roundTripNanos = roundTripNanos;
  }

  /**
   * A target with weight 1, zone {@code ""}, no metadata and id {@code host:port}
   * ({@code [host]:port} for an IPv6 literal).
   *
   * @throws IllegalArgumentException if {@code host} is not a DNS name, an IPv4 literal or an IPv6
   *     literal (so {@code "10.0.0.1:8080"} is refused), or {@code port} is outside 1..65535
   */
  public static Target of(String host, int port) {
    String checkedHost = checkHost(host);
    checkPort(port);
    String id = (checkedHost.indexOf(':') >= 0 ? "[" + checkedHost + "]" : checkedHost) + ":" + port;
    return new Target(id, checkedHost, port, 1, "", Map.of(), true, -1);
  }

  /**
   * This target with another weight: its share relative to the other targets for the weighted
   * strategies, and its capacity for the load-aware ones.
   *
   * @throws IllegalArgumentException if {@code weight} is outside 1..1,000,000
   */
  public Target withWeight(int weight) {
    if (weight < 1 || weight > MAX_WEIGHT) {
      throw new IllegalArgumentException("weight: " + weight + " (expected: 1.." + MAX_WEIGHT + ")");
    }
    return new Target(id, host, port, weight, zone, metadata, healthy, roundTripNanos);
  }

  /** This target in another zone ({@code ""} for none). */
  public Target withZone(String zone) {
    if (zone == null) {
      throw new IllegalArgumentException("zone: null (expected: a zone name, or \"\" for none)");
    }
    return new Target(id, host, port, weight, zone, metadata, healthy, roundTripNanos);
  }

  /** This target under another id (for example a discovery system's instance id). */
  public Target withId(String id) {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("id: " + quote(id) + " (expected: a non-blank string)");
    }
    return new Target(id, host, port, weight, zone, metadata, healthy, roundTripNanos);
  }

  /** This target with other metadata; the map is copied, its order kept. */
  public Target withMetadata(Map<String, String> metadata) {
    if (metadata == null) {
      throw new IllegalArgumentException("metadata: null (expected: a map, possibly empty)");
    }
    Map<String, String> copy = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      if (e.getKey() == null || e.getValue() == null) {
        throw new IllegalArgumentException(
            "metadata: entry " + e.getKey() + "=" + e.getValue() + " (expected: no null keys or values)");
      }
      copy.put(e.getKey(), e.getValue());
    }
    return new Target(id, host, port, weight, zone, Collections.unmodifiableMap(copy), healthy, roundTripNanos);
  }

  /**
   * This target with its source's word on its health. A target its source reports unhealthy (for
   * example a Consul instance with a critical check) stays a member, in state
   * {@link TargetState#UNHEALTHY}: it gets calls only in panic mode, when too few targets are healthy
   * to serve without it. Targets are healthy unless a source says otherwise.
   */
  public Target withHealthy(boolean healthy) {
    return new Target(id, host, port, weight, zone, metadata, healthy, roundTripNanos);
  }

  /**
   * This target with an estimate of the round-trip time from the caller to it, for closeness: a
   * source that measures distance (Consul's network coordinates) sets it, and strategies that rank by
   * closeness prefer the lower one. {@code null} means unknown (the default); unknown ranks after
   * every known time.
   *
   * @throws IllegalArgumentException if {@code roundTripTime} is negative
   */
  public Target withRoundTripTime(@Nullable Duration roundTripTime) {
    long nanos = -1;
    if (roundTripTime != null) {
      if (roundTripTime.isNegative()) {
        throw new IllegalArgumentException(
            "roundTripTime: " + roundTripTime + " (expected: zero or more, or null for unknown)");
      }
      nanos = saturatedNanos(roundTripTime);
    }
    return new Target(id, host, port, weight, zone, metadata, healthy, nanos);
  }

  /** The estimated round-trip time set with {@link #withRoundTripTime}, if any. */
  public Optional<Duration> roundTripTime() {
    return roundTripNanos < 0 ? Optional.empty() : Optional.of(Duration.ofNanos(roundTripNanos));
  }

  /**
   * The estimated round-trip time in nanoseconds, or {@code -1} when unknown: the allocation-free form
   * of {@link #roundTripTime()} for code that ranks targets.
   */
  public long roundTripNanos() {
    return roundTripNanos;
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  /** The identity of this target: {@code host:port} unless set with {@link #withId}. */
  public String id() {
    return id;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  public int weight() {
    return weight;
  }

  public String zone() {
    return zone;
  }

  /** Unmodifiable. */
  public Map<String, String> metadata() {
    return metadata;
  }

  /** False if this target's source reports it unhealthy (see {@link #withHealthy}); true otherwise. */
  public boolean healthy() {
    return healthy;
  }

  /** {@code host:port}, with brackets around an IPv6 literal: what a URL's authority needs. */
  public String authority() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  /** True if address, weight, zone, health, round-trip time and metadata are all equal too (not only the id). */
  boolean sameAs(Target other) {
    return id.equals(other.id)
        && host.equals(other.host)
        && port == other.port
        && weight == other.weight
        && zone.equals(other.zone)
        && healthy == other.healthy
        && roundTripNanos == other.roundTripNanos
        && metadata.equals(other.metadata);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o == this || (o instanceof Target other && other.id.equals(id));
  }

  @Override
  public int hashCode() {
    return id.hashCode();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Target{").append(id);
    if (!id.equals(authority())) {
      sb.append(" at ").append(authority());
    }
    if (weight != 1) {
      sb.append(", weight=").append(weight);
    }
    if (!zone.isEmpty()) {
      sb.append(", zone=").append(zone);
    }
    if (!healthy) {
      sb.append(", unhealthy");
    }
    if (roundTripNanos >= 0) {
      sb.append(", rtt=").append(Duration.ofNanos(roundTripNanos));
    }
    return sb.append('}').toString();
  }

  /**
   * The host as stored (an IPv6 literal without brackets). Accepts a DNS name (labels of letters,
   * digits, '-' and '_', not starting or ending with '-', at most 63 characters each and 253 in
   * all, an optional final dot), an IPv4 literal, or an IPv6 literal (bracketed or bare, with an
   * optional zone id). A name made only of digits and dots must be a valid IPv4 literal, so
   * {@code "10.0.0.1:8080"} or {@code "10.0.0.256"} is refused here rather than failing every call.
   */
  private static String checkHost(String host) {
    if (host != null && !host.isEmpty()) {
      boolean bracketed = host.length() > 2 && host.charAt(0) == '[' && host.charAt(host.length() - 1) == ']';
      String h = bracketed ? host.substring(1, host.length() - 1) : host;
      if ((bracketed || h.indexOf(':') >= 0) ? isIpv6(h) : (isIpv4(h) || (!looksNumeric(h) && isDnsName(h)))) {
        return h;
      }
    }
    throw new IllegalArgumentException("host: " + quote(host) + " (expected: a host name or IP address)");
  }

  private static boolean looksNumeric(String h) {
    for (int i = 0; i < h.length(); i++) {
      char c = h.charAt(i);
      if (c != '.' && (c < '0' || c > '9')) {
        return false;
      }
    }
    return true;
  }

  static boolean isIpv4(String h) {
    int parts = 0;
    int i = 0;
    int n = h.length();
    while (i <= n) {
      int start = i;
      int value = 0;
      while (i < n && h.charAt(i) >= '0' && h.charAt(i) <= '9' && i - start < 3) {
        value = value * 10 + (h.charAt(i++) - '0');
      }
      if (i == start || value > 255 || (i - start > 1 && h.charAt(start) == '0')) {
        return false;
      }
      parts++;
      if (i == n) {
        return parts == 4;
      }
      if (h.charAt(i) != '.' || parts == 4) {
        return false;
      }
      i++;
    }
    return false;
  }

  static boolean isIpv6(String h) {
    int zone = h.indexOf('%');
    if (zone >= 0) {
      if (zone == h.length() - 1) {
        return false;
      }
      for (int i = zone + 1; i < h.length(); i++) {
        char c = h.charAt(i);
        if (!(Character.isLetterOrDigit(c) || c == '-' || c == '_' || c == '.')) {
          return false;
        }
      }
      h = h.substring(0, zone);
    }
    int doubleColon = h.indexOf("::");
    if (doubleColon >= 0 && h.indexOf("::", doubleColon + 1) >= 0) {
      return false;
    }
    String head = doubleColon >= 0 ? h.substring(0, doubleColon) : h;
    String tail = doubleColon >= 0 ? h.substring(doubleColon + 2) : "";
    int groups = 0;
    String[] halves = {head, tail};
    for (int half = 0; half < halves.length; half++) {
      String part = halves[half];
      if (part.isEmpty()) {
        continue;
      }
      String[] pieces = part.split(":", -1);
      for (int i = 0; i < pieces.length; i++) {
        String p = pieces[i];
        // The last group of the address (of the tail, or of the whole when there is no "::").
        boolean last = (half == 1 || doubleColon < 0) && i == pieces.length - 1;
        if (last && p.indexOf('.') >= 0) {
          if (!isIpv4(p)) {
            return false;
          }
          groups += 2; // an embedded IPv4 address fills the last two groups
        } else if (p.isEmpty() || p.length() > 4 || !isHex(p)) {
          return false;
        } else {
          groups++;
        }
      }
    }
    return doubleColon >= 0 ? groups <= 7 : groups == 8;
  }

  private static boolean isHex(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.digit(s.charAt(i), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  static boolean isDnsName(String h) {
    String name = h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
    if (name.isEmpty() || name.length() > 253) {
      return false;
    }
    int labelStart = 0;
    for (int i = 0; i <= name.length(); i++) {
      if (i == name.length() || name.charAt(i) == '.') {
        int len = i - labelStart;
        if (len == 0 || len > 63 || name.charAt(labelStart) == '-' || name.charAt(i - 1) == '-') {
          return false;
        }
        labelStart = i + 1;
        continue;
      }
      char c = name.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  private static void checkPort(int port) {
    if (port < 1 || port > 65_535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
    }
  }

  static Target requireNonNull(Target t, String field) {
    if (t == null) {
      throw new IllegalArgumentException(field + ": null (expected: a Target)");
    }
    return t;
  }
}
