package dev.fairway.lb.spring;

import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

/**
 * Sets ORCA's {@code endpoint-load-metrics} header ({@link LoadReport}) on every response of a
 * reactive application, at the moment the response commits ({@code beforeCommit}), with the
 * requests in flight as of then. A request counts from the moment it enters the filter chain until
 * the chain completes, fails or is cancelled. First in the chain.
 */
final class LoadReportWebFilter implements WebFilter, Ordered {
  private final LoadReport load;

  LoadReportWebFilter(LoadReport load) {
    this.load = load;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    load.started();
    AtomicBoolean ended = new AtomicBoolean();
    exchange.getResponse().beforeCommit(() -> {
      exchange.getResponse().getHeaders().set(LoadReport.HEADER, ended.get() ? LoadReport.header(load.inFlight(),
          load.workers()) : load.header());
      return Mono.empty();
    });
    return chain.filter(exchange).doFinally(signal -> {
      if (ended.compareAndSet(false, true)) {
        load.ended();
      }
    });
  }
}
