package dev.fairway.lb.jdk;

import dev.fairway.lb.Target;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The URIs of one service's requests aimed at its targets. Parsing a URI is most of what routing a
 * request costs, so each target keeps its authority prefixes ({@code http://host:port}) and the
 * last URI it routed: a caller that sends the same request again (a poll, a prebuilt request)
 * parses nothing. Entries of departed targets are dropped by {@link #forget}; a bound keeps the
 * cache finite even if nobody does. Thread-safe.
 */
final class TargetUris {
  private static final int MAX_CACHED_TARGETS = 4_096;

  private final ConcurrentHashMap<String, Entry> byId = new ConcurrentHashMap<>();

  /**
   * {@code logical} with the target's host and port; scheme, user info, path and query kept.
   *
   * @throws URISyntaxException if the target's host cannot stand in a URI
   */
  URI routed(URI logical, Target target) throws URISyntaxException {
    Entry entry = byId.get(target.id());
    if (entry == null || entry.port != target.port() || !entry.host.equals(target.host())) {
      entry = new Entry(target);
      if (byId.size() >= MAX_CACHED_TARGETS) {
        byId.clear();
      }
      byId.put(target.id(), entry);
    }
    return entry.routed(logical);
  }

  /** Drops the entry of a target that left. */
  void forget(Target target) {
    byId.remove(target.id());
  }

  void clear() {
    byId.clear();
  }

  int size() {
    return byId.size();
  }

  /** One target's address, and the last URI routed to it (published whole through a volatile field). */
  private static final class Entry {
    final String host;
    final int port;
    private final String authority; // host:port, an IPv6 literal in brackets
    private volatile @Nullable Routed last;

    Entry(Target target) {
      this.host = target.host();
      this.port = target.port();
      String h = host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
      this.authority = h + ":" + port;
    }

    @SuppressWarnings("ReferenceEquality") // identity first: the caller's same URI is the common case; equals follows
    URI routed(URI logical) throws URISyntaxException {
      Routed l = last;
      if (l != null && (l.logical == logical || l.logical.equals(logical))) {
        return l.routed;
      }
      StringBuilder s = new StringBuilder(64).append(logical.getScheme()).append("://");
      String userInfo = logical.getRawUserInfo();
      if (userInfo != null) {
        s.append(userInfo).append('@');
      }
      s.append(authority);
      String path = logical.getRawPath();
      s.append(path == null || path.isEmpty() ? "/" : path);
      String query = logical.getRawQuery();
      if (query != null) {
        s.append('?').append(query);
      }
      URI uri = new URI(s.toString());
      if (uri.getHost() == null) {
        throw new URISyntaxException(s.toString(), "not a server-based authority");
      }
      last = new Routed(logical, uri);
      return uri;
    }
  }

  private record Routed(URI logical, URI routed) {}
}
