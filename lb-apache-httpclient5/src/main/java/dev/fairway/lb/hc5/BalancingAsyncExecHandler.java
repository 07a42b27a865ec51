package dev.fairway.lb.hc5;

import java.io.IOException;
import org.apache.hc.client5.http.async.AsyncExecCallback;
import org.apache.hc.client5.http.async.AsyncExecChain;
import org.apache.hc.client5.http.async.AsyncExecChainHandler;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.jspecify.annotations.Nullable;

/**
 * Fairway's element of the async client's exec chain (before {@code PROTOCOL}, as the classic one):
 * a request to a registered logical host becomes an {@link AsyncBalancedExchange}; any other passes
 * through untouched. Shares the routes and rules of the classic handler. Immutable and thread-safe.
 */
final class BalancingAsyncExecHandler implements AsyncExecChainHandler {
  private final BalancingExecHandler classic;

  BalancingAsyncExecHandler(BalancingExecHandler classic) {
    this.classic = classic;
  }

  @Override
  public void execute(HttpRequest request, @Nullable AsyncEntityProducer entityProducer, AsyncExecChain.Scope scope,
      AsyncExecChain chain, AsyncExecCallback callback) throws HttpException, IOException {
    ServiceRoute route = classic.routeOf(request, scope.route);
    if (route == null) {
      scope.clientContext.removeAttribute(BalancingExecHandler.BALANCED);
      chain.proceed(request, entityProducer, scope, callback);
      return;
    }
    scope.clientContext.setAttribute(BalancingExecHandler.BALANCED, route.host);
    new AsyncBalancedExchange(request, entityProducer, scope, chain, callback, route, classic).start();
  }
}
