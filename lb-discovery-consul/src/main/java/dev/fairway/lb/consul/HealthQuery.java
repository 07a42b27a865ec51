package dev.fairway.lb.consul;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What one source asks Consul, and how that is spelled as a {@code /v1/health/service/<name>} request:
 * the query parameters, the {@code wait} as a Go duration and the read timeout above Consul's longest
 * answer. Immutable; null fields are left out of the query.
 */
record HealthQuery(String service, boolean passingOnly, List<String> tags, @Nullable String datacenter,
    @Nullable String filter, List<String> nodeMeta, @Nullable String namespace, @Nullable String partition,
    @Nullable String peer, boolean cached, @Nullable Duration maxStale, Duration waitTime) {

  /** The request path: blocking on {@code blockOn} unless it is 0, {@code stale} unless {@code consistent}. */
  String pathAndQuery(long blockOn, boolean consistent) {
    StringBuilder q = new StringBuilder("/v1/health/service/").append(encode(service).replace("+", "%20"));
    Params p = new Params(q);
    if (passingOnly) {
      p.flag("passing");
    }
    for (String t : tags) {
      p.add("tag", t);
    }
    p.add("dc", datacenter);
    p.add("filter", filter);
    for (String m : nodeMeta) {
      p.add("node-meta", m);
    }
    p.add("ns", namespace);
    p.add("partition", partition);
    p.add("peer", peer);
    if (cached) {
      p.flag("cached");
    }
    if (maxStale != null && !consistent) {
      p.flag("stale");
    }
    if (blockOn != 0) {
      p.add("index", Long.toUnsignedString(blockOn));
      p.add("wait", goDuration(waitTime));
    }
    return q.toString();
  }

  /** The read timeout of every query of this source. */
  Duration timeout() {
    return readTimeout(waitTime);
  }

  /** A Go duration string for Consul's {@code wait}: {@code 5m}, {@code 30s} or {@code 1500ms}. */
  static String goDuration(Duration d) {
    long ms = d.toMillis();
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1_000 == 0) {
      return ms / 1_000 + "s";
    }
    return ms + "ms";
  }

  /** Above Consul's longest answer time: wait, plus up to wait/16 of jitter, plus a margin. */
  static Duration readTimeout(Duration wait) {
    long waitMs = wait.toMillis();
    long margin = Math.min(30_000, Math.max(1_000, waitMs / 10));
    return Duration.ofMillis(waitMs + waitMs / 16 + margin);
  }

  /** Appends {@code ?a=b&c} pairs. */
  private static final class Params {
    private final StringBuilder q;
    private boolean first = true;

    Params(StringBuilder q) {
      this.q = q;
    }

    void flag(String name) {
      q.append(first ? '?' : '&').append(name);
      first = false;
    }

    /** Appends {@code name=value}, or nothing when {@code value} is null. */
    void add(String name, @Nullable String value) {
      if (value != null) {
        flag(name);
        q.append('=').append(encode(value));
      }
    }
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
