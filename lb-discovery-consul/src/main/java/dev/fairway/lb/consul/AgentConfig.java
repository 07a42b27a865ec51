package dev.fairway.lb.consul;

import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * How to reach one Consul agent, resolved from builder options and the environment. Immutable.
 *
 * @param baseUrl {@code http(s)://host:port}, no trailing slash
 * @param token the ACL token, or null (never logged, never in a URL)
 * @param basicAuth a ready {@code Authorization: Basic ...} value, or null
 * @param sslContext for https: the trust (and client key) material, or null for the JDK default
 * @param namespace the default {@code ns} of every query (Enterprise), or null
 * @param partition the default {@code partition} of every query (Enterprise), or null
 */
record AgentConfig(String baseUrl, @Nullable String token, @Nullable String basicAuth, @Nullable SSLContext sslContext,
    Duration connectTimeout, @Nullable String namespace, @Nullable String partition) {

  @Override
  public String toString() {
    return baseUrl + (token == null ? "" : " (token set)");
  }
}
