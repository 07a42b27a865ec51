package dev.fairway.lb;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

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

  private Target(
      String id, String host, int port, int weight, String zone, Map<String, String> metadata, boolean healthy) {
    this.id = id;
    this.host = host;
    this.port = port;
    this.weight = weight;
    this.zone = zone;
    this.metadata = metadata;
    this.healthy = healthy;
  }

  /**
   * A target with weight 1, zone {@code ""}, no metadata and id {@code host:port}
   * ({@code [host]:port} for an IPv6 literal).
   *
   * @throws IllegalArgumentException if {@code host} is null, blank or contains white space, or
   *     {@code port} is outside 1..65535
   */
  public static Target of(String host, int port) {
    String checkedHost = checkHost(host);
    checkPort(port);
    String id = (checkedHost.indexOf(':') >= 0 ? "[" + checkedHost + "]" : checkedHost) + ":" + port;
    return new Target(id, checkedHost, port, 1, "", Map.of(), true);
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
    return new Target(id, host, port, weight, zone, metadata, healthy);
  }

  /** This target in another zone ({@code ""} for none). */
  public Target withZone(String zone) {
    if (zone == null) {
      throw new IllegalArgumentException("zone: null (expected: a zone name, or \"\" for none)");
    }
    return new Target(id, host, port, weight, zone, metadata, healthy);
  }

  /** This target under another id (for example a discovery system's instance id). */
  public Target withId(String id) {
    if (id == null || id.isBlank()) {
      throw new IllegalArgumentException("id: " + quote(id) + " (expected: a non-blank string)");
    }
    return new Target(id, host, port, weight, zone, metadata, healthy);
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
    return new Target(id, host, port, weight, zone, Collections.unmodifiableMap(copy), healthy);
  }

  /**
   * This target with its source's word on its health. A target its source reports unhealthy (for
   * example a Consul instance with a critical check) stays a member, in state
   * {@link TargetState#UNHEALTHY}: it gets calls only in panic mode, when too few targets are healthy
   * to serve without it. Targets are healthy unless a source says otherwise.
   */
  public Target withHealthy(boolean healthy) {
    return new Target(id, host, port, weight, zone, metadata, healthy);
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

  /** True if address, weight, zone and metadata are all equal too (not only the id). */
  boolean sameAs(Target other) {
    return id.equals(other.id)
        && host.equals(other.host)
        && port == other.port
        && weight == other.weight
        && zone.equals(other.zone)
        && healthy == other.healthy
        && metadata.equals(other.metadata);
  }

  @Override
  public boolean equals(Object o) {
    return o == this || (o instanceof Target && ((Target) o).id.equals(id));
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
    return sb.append('}').toString();
  }

  private static String checkHost(String host) {
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("host: " + quote(host) + " (expected: a host name or IP address)");
    }
    String h = host;
    if (h.length() > 2 && h.charAt(0) == '[' && h.charAt(h.length() - 1) == ']') {
      h = h.substring(1, h.length() - 1); // accept a bracketed IPv6 literal, store it bare
    }
    for (int i = 0; i < h.length(); i++) {
      char c = h.charAt(i);
      if (Character.isWhitespace(c) || c == '/' || c == '?' || c == '#' || c == '@' || c == '[' || c == ']') {
        throw new IllegalArgumentException("host: " + quote(host) + " (expected: a host name or IP address)");
      }
    }
    return h;
  }

  private static void checkPort(int port) {
    if (port < 1 || port > 65_535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 1..65535)");
    }
  }

  static String quote(String s) {
    return s == null ? "null" : "\"" + s + "\"";
  }

  static Target requireNonNull(Target t, String field) {
    if (t == null) {
      throw new IllegalArgumentException(field + ": null (expected: a Target)");
    }
    return t;
  }
}
