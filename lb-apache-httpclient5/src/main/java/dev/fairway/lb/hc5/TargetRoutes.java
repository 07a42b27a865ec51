package dev.fairway.lb.hc5;

import dev.fairway.lb.Target;
import java.net.ConnectException;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.net.URIAuthority;
import org.jspecify.annotations.Nullable;

/**
 * The routes and authorities of one service's attempts, per target. Making an {@link HttpHost} and
 * an {@link HttpRoute} for every attempt is much of what routing an attempt costs, so each target
 * keeps its authority and the last route made for it with the planned route it came from: the
 * requests of one service plan the same route (scheme, proxy, local address), so an attempt makes
 * none. Entries of departed targets are dropped by {@link #forget}; a bound keeps the cache finite
 * even if nobody does. The same for the classic and the async client. Thread-safe.
 */
final class TargetRoutes {
  private static final int MAX_CACHED_TARGETS = 4_096;

  private final String service;
  private final ConcurrentHashMap<String, Entry> byId = new ConcurrentHashMap<>();

  TargetRoutes(String service) {
    this.service = service;
  }

  /** The entry of {@code target}, made if it has none (or its address changed under the same id). */
  Entry of(Target target) {
    Entry entry = byId.get(target.id());
    if (entry == null || entry.port != target.port() || !entry.host.equals(target.host())) {
      entry = new Entry(target, service);
      if (byId.size() >= MAX_CACHED_TARGETS) {
        byId.clear();
      }
      byId.put(target.id(), entry);
    }
    return entry;
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

  /**
   * One target's authority (so that {@code Host} names it) and the last route made for it (published
   * whole through a volatile field).
   */
  static final class Entry {
    final String host;
    final int port;
    final URIAuthority authority;
    private final String id;
    private final String service;
    private volatile @Nullable Routed last;

    Entry(Target target, String service) {
      this.host = target.host();
      this.port = target.port();
      this.id = target.id();
      this.service = service;
      this.authority = new URIAuthority(host, port);
    }

    /**
     * The route of an attempt on this target: the planned route's scheme, security, local address
     * and proxy, with the target as its end. A target HttpClient will not take as a host is that
     * target's failure, like a connection that could not be made (so it is ejected, and the
     * exchange moves on), not a bug.
     */
    @SuppressWarnings("ReferenceEquality") // identity first, then equals: each exchange plans a route of its own
    HttpRoute route(HttpRoute planned) throws ConnectException {
      Routed l = last;
      if (l != null && (l.planned == planned || l.planned.equals(planned))) {
        return l.routed;
      }
      HttpHost to;
      try {
        to = new HttpHost(planned.getTargetHost().getSchemeName(), host, port);
      } catch (IllegalArgumentException e) {
        ConnectException unaddressable = new ConnectException("target " + id + " of " + service
            + " has an address HttpClient cannot use: " + e.getMessage());
        unaddressable.initCause(e);
        throw unaddressable;
      }
      HttpHost proxy = planned.getProxyHost();
      HttpRoute routed = proxy == null
          ? new HttpRoute(to, planned.getLocalAddress(), planned.isSecure())
          : new HttpRoute(to, planned.getLocalAddress(), proxy, planned.isSecure(), planned.getTunnelType(),
              planned.getLayerType());
      last = new Routed(planned, routed);
      return routed;
    }
  }

  private record Routed(HttpRoute planned, HttpRoute routed) {}
}
