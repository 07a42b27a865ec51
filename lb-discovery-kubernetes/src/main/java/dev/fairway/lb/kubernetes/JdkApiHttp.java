package dev.fairway.lb.kubernetes;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * {@link ApiHttp} on the JDK's HTTP client (HTTP/1.1: one connection per watch, as client-go without
 * HTTP/2). The bearer token is read from the {@link ClusterConnection} for every request, so a rotated
 * token is used as soon as the kubelet writes it; it travels only in the {@code Authorization} header.
 * A watch's lines are delivered as they arrive (the body is never buffered whole); {@link Call#cancel()}
 * cancels the body subscription, which closes the connection.
 */
final class JdkApiHttp implements ApiHttp {
  private final ClusterConnection connection;
  private final HttpClient client;

  JdkApiHttp(ClusterConnection connection, Duration connectTimeout, Executor executor) {
    this.connection = connection;
    HttpClient.Builder b = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(connectTimeout)
        .followRedirects(HttpClient.Redirect.NEVER)
        .executor(executor);
    SSLContext ssl = connection.ssl();
    if (ssl != null) {
      b.sslContext(ssl);
    }
    this.client = b.build();
  }

  private HttpRequest request(String pathAndQuery, @Nullable Duration timeout) throws IOException {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(connection.server() + pathAndQuery))
        .header("Accept", "application/json")
        .GET();
    if (timeout != null) {
      r.timeout(timeout);
    }
    String token = connection.token();
    if (token != null) {
      r.header("Authorization", "Bearer " + token);
    }
    return r.build();
  }

  @Override
  public CompletableFuture<Reply> get(String pathAndQuery, Duration timeout) {
    HttpRequest request;
    try {
      request = request(pathAndQuery, timeout);
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return client.sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
        .thenApply(r -> new Reply(r.statusCode(), r.body(), r.headers().firstValue("Retry-After").orElse(null)));
  }

  @Override
  public Call watch(String pathAndQuery, WatchListener listener) {
    HttpRequest request;
    try {
      // No request timeout: it would cut the stream; the watch's own deadline guards against a stall.
      request = request(pathAndQuery, null);
    } catch (IOException | RuntimeException e) {
      listener.ended(e);
      return () -> { };
    }
    LineStream lines = new LineStream(listener);
    CompletableFuture<HttpResponse<String>> response = client.sendAsync(request, info -> {
      if (info.statusCode() != 200) {
        return BodySubscribers.ofString(StandardCharsets.UTF_8);
      }
      lines.open();
      BodySubscriber<String> streamed = BodySubscribers.fromLineSubscriber(lines, s -> "", StandardCharsets.UTF_8, "\n");
      return streamed;
    });
    CompletableFuture<?> unused = response.whenComplete((r, failure) -> {
      if (lines.opened.get()) {
        return; // the line subscriber reports the end of a stream that opened
      }
      if (failure != null) {
        lines.end(failure);
      } else if (r.statusCode() != 200) {
        lines.refused(new Reply(r.statusCode(), r.body(), r.headers().firstValue("Retry-After").orElse(null)));
      }
    });
    return () -> {
      lines.cancel();
      response.cancel(true);
    };
  }

  /** The line subscriber of one watch; reports exactly one end. */
  private static final class LineStream implements Flow.Subscriber<String> {
    private final WatchListener listener;
    final AtomicBoolean opened = new AtomicBoolean();
    private final AtomicBoolean done = new AtomicBoolean();
    private volatile Flow.@Nullable Subscription subscription;
    private volatile boolean cancelled;

    LineStream(WatchListener listener) {
      this.listener = listener;
    }

    void open() {
      opened.set(true);
      listener.opened();
    }

    void cancel() {
      cancelled = true;
      done.set(true);
      Flow.Subscription s = subscription;
      if (s != null) {
        s.cancel();
      }
    }

    void end(@Nullable Throwable failure) {
      if (done.compareAndSet(false, true)) {
        listener.ended(failure);
      }
    }

    void refused(Reply reply) {
      if (done.compareAndSet(false, true)) {
        listener.refused(reply);
      }
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription = s;
      if (cancelled) {
        s.cancel();
      } else {
        s.request(Long.MAX_VALUE);
      }
    }

    @Override
    public void onNext(String line) {
      if (!cancelled && !line.isBlank()) {
        listener.line(line);
      }
    }

    @Override
    public void onError(Throwable failure) {
      end(failure);
    }

    @Override
    public void onComplete() {
      end(null);
    }
  }
}
