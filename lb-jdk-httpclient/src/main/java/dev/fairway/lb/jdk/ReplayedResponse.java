package dev.fairway.lb.jdk;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLSession;

/**
 * A response whose body was read whole for a retry that was not made after all (say the budget was
 * spent): the retained bytes go through the caller's handler now, so the caller gets the response
 * as if it had been handed on at once. Immutable once built.
 */
final class ReplayedResponse<T> implements HttpResponse<T> {
  private final HttpResponse<T> response;
  private final T body;

  private ReplayedResponse(HttpResponse<T> response, T body) {
    this.response = response;
    this.body = body;
  }

  /** Feeds {@code bytes} to the subscriber {@code handler} makes for {@code response}; its body, when it has one. */
  static <T> CompletionStage<HttpResponse<T>> replay(HttpResponse<T> response, byte[] bytes, BodyHandler<T> handler) {
    BodySubscriber<T> subscriber = handler.apply(new Info(response));
    subscriber.onSubscribe(new Flow.Subscription() {
      private final AtomicBoolean sent = new AtomicBoolean();

      @Override
      public void request(long n) {
        if (n > 0 && sent.compareAndSet(false, true)) {
          if (bytes.length > 0) {
            subscriber.onNext(List.of(ByteBuffer.wrap(bytes)));
          }
          subscriber.onComplete();
        }
      }

      @Override
      public void cancel() {
        sent.set(true);
      }
    });
    return subscriber.getBody().thenApply(body -> new ReplayedResponse<>(response, body));
  }

  @Override
  public int statusCode() {
    return response.statusCode();
  }

  @Override
  public HttpRequest request() {
    return response.request();
  }

  @Override
  public Optional<HttpResponse<T>> previousResponse() {
    return response.previousResponse();
  }

  @Override
  public HttpHeaders headers() {
    return response.headers();
  }

  @Override
  public T body() {
    return body;
  }

  @Override
  public Optional<SSLSession> sslSession() {
    return response.sslSession();
  }

  @Override
  public URI uri() {
    return response.uri();
  }

  @Override
  public HttpClient.Version version() {
    return response.version();
  }

  @Override
  public String toString() {
    return response.toString();
  }

  private record Info(HttpResponse<?> response) implements ResponseInfo {
    @Override
    public int statusCode() {
      return response.statusCode();
    }

    @Override
    public HttpHeaders headers() {
      return response.headers();
    }

    @Override
    public HttpClient.Version version() {
      return response.version();
    }
  }
}
