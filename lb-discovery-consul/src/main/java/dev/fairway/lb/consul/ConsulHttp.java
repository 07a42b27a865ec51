package dev.fairway.lb.consul;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * The one thing the watch needs from HTTP: an asynchronous GET against the agent. The production
 * implementation is {@link JdkConsulHttp}; tests substitute a scripted one and answer each request by
 * hand, so that every request and every wait of the loop can be asserted in order.
 */
interface ConsulHttp {
  /**
   * Sends {@code GET <agent><pathAndQuery>} with the agent's credentials. The future completes with the
   * reply (any status) or exceptionally with the transport's failure; cancelling it aborts the request.
   * Never throws.
   */
  CompletableFuture<Reply> get(String pathAndQuery, Duration timeout);

  /** One HTTP reply; header names are matched case-insensitively (Go writes {@code X-Consul-Knownleader}). */
  record Reply(int status, Map<String, List<String>> headers, String body) {
    public Reply {
      Map<String, List<String>> lower = new java.util.HashMap<>();
      headers.forEach((k, v) -> lower.put(k.toLowerCase(Locale.ROOT), List.copyOf(v)));
      headers = Map.copyOf(lower);
    }

    /** The first value of {@code name}, or null. */
    @Nullable String header(String name) {
      List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
      return v == null || v.isEmpty() ? null : v.get(0);
    }
  }
}
