package dev.fairway.lb.consul;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * {@link ConsulHttp} on the JDK's non-blocking {@link HttpClient}: a blocking query waits in the
 * client's selector, not on a thread, so any number of watches share one selector thread and the
 * small executor handed in. HTTP/1.1 only, so that each in-flight blocking query is exactly one
 * connection to the agent (what {@code limits.http_max_conns_per_client} counts).
 *
 * <p>Thread-safe.
 */
final class JdkConsulHttp implements ConsulHttp {
  private final HttpClient client;
  private final String base;
  private final @Nullable String token;
  private final @Nullable String basicAuth;

  JdkConsulHttp(AgentConfig agent, Executor executor) {
    HttpClient.Builder b = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(agent.connectTimeout())
        .followRedirects(HttpClient.Redirect.NEVER)
        .executor(executor);
    if (agent.sslContext() != null) {
      b.sslContext(agent.sslContext());
    }
    this.client = b.build();
    this.base = agent.baseUrl();
    this.token = agent.token();
    this.basicAuth = agent.basicAuth();
  }

  @Override
  public CompletableFuture<Reply> get(String pathAndQuery, Duration timeout) {
    try {
      HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(base + pathAndQuery)).timeout(timeout).GET();
      if (token != null) {
        r.header("X-Consul-Token", token); // never ?token=: query strings end up in access logs
      }
      if (basicAuth != null) {
        r.header("Authorization", basicAuth);
      }
      CompletableFuture<HttpResponse<String>> sent =
          client.sendAsync(r.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      // Cancelling a dependent stage would not reach the exchange: cancel the sent future itself.
      CompletableFuture<Reply> reply = new CompletableFuture<>() {
        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
          sent.cancel(true);
          return super.cancel(mayInterruptIfRunning);
        }
      };
      // Every outcome, a failure of the callback itself included, completes reply, so the stage this
      // returns has nothing to add; an escaping exception would have left the watch waiting forever.
      CompletableFuture<?> unused = sent.whenComplete((res, e) -> {
        if (e != null) {
          reply.completeExceptionally(e);
          return;
        }
        try {
          reply.complete(new Reply(res.statusCode(), res.headers().map(), res.body()));
        } catch (RuntimeException bad) {
          reply.completeExceptionally(bad);
        }
      });
      return reply;
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
