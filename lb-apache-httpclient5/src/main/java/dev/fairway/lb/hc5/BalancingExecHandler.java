package dev.fairway.lb.hc5;

import dev.fairway.lb.internal.RetryRule;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.client5.http.classic.ExecChain;
import org.apache.hc.client5.http.classic.ExecChainHandler;
import org.apache.hc.core5.http.ClassicHttpRequest;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.net.URIAuthority;
import org.jspecify.annotations.Nullable;

/**
 * Fairway's element of HttpClient's exec chain (placed before {@code PROTOCOL} by {@link
 * FairwayHttpClient5#customize}): a request to a registered logical host becomes a {@link
 * BalancedExchange}; any other passes through untouched. Marks the exchange in its context either
 * way ({@link #BALANCED}), for {@link BalancedRetryStrategy}. Immutable and thread-safe.
 */
final class BalancingExecHandler implements ExecChainHandler {
  /** Context attribute: the logical host of the exchange Fairway balanced; absent for any other. */
  static final String BALANCED = "dev.fairway.lb.hc5.balanced";

  private final Map<String, ServiceRoute> routes; // by lower-case logical host; never mutated
  private final @Nullable ServiceRoute onlyRoute; // when exactly one service is registered: skips the map lookup
  final RetryRule retries;
  final long bufferBodiesUpTo;
  final Sleeper sleeper;
  private final @Nullable AffinityKey affinityKey; // null = every pick without a key

  BalancingExecHandler(Map<String, ServiceRoute> routes, RetryRule retries, long bufferBodiesUpTo, Sleeper sleeper,
      @Nullable AffinityKey affinityKey) {
    this.routes = Map.copyOf(routes);
    this.onlyRoute = routes.size() == 1 ? routes.values().iterator().next() : null;
    this.retries = retries;
    this.bufferBodiesUpTo = bufferBodiesUpTo;
    this.sleeper = sleeper;
    this.affinityKey = affinityKey;
  }

  /** The affinity key of {@code request}, read once per exchange; null when it has none or no key is configured. */
  @Nullable String affinityKeyOf(HttpRequest request) {
    AffinityKey key = affinityKey;
    return key == null ? null : key.apply(request);
  }

  @Override
  public ClassicHttpResponse execute(ClassicHttpRequest request, ExecChain.Scope scope, ExecChain chain)
      throws IOException, HttpException {
    ServiceRoute route = routeOf(request, scope.route);
    if (route == null) {
      scope.clientContext.removeAttribute(BALANCED);
      return chain.proceed(request, scope);
    }
    scope.clientContext.setAttribute(BALANCED, route.host);
    return new BalancedExchange(request, scope, chain, route, this).proceed();
  }

  /** The route of the request's host (its authority's, else the planned route's target), or null. */
  @Nullable ServiceRoute routeOf(HttpRequest request, HttpRoute planned) {
    URIAuthority authority = request.getAuthority();
    String host = authority != null ? authority.getHostName() : planned.getTargetHost().getHostName();
    ServiceRoute only = onlyRoute;
    if (only != null) {
      return only.host.equalsIgnoreCase(host) ? only : null;
    }
    ServiceRoute route = routes.get(host);
    return route != null ? route : routes.get(host.toLowerCase(Locale.ROOT));
  }

  Set<String> hosts() {
    return routes.keySet();
  }

  RetryRule retries() {
    return retries;
  }

  /** The route of {@code logicalHost}, or null; for tests. */
  @Nullable ServiceRoute route(String logicalHost) {
    return routes.get(logicalHost);
  }
}
