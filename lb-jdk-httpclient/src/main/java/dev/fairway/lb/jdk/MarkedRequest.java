package dev.fairway.lb.jdk;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A request that sends exactly what another sends and carries an idempotency mark ({@link
 * FairwayHttpClient#idempotent}, {@link FairwayHttpClient#nonIdempotent}). Immutable.
 */
final class MarkedRequest extends HttpRequest {
  private final HttpRequest request;
  private final boolean idempotent;

  private MarkedRequest(HttpRequest request, boolean idempotent) {
    this.request = request;
    this.idempotent = idempotent;
  }

  /** {@code request} marked; a request marked already gets this mark instead. */
  static HttpRequest mark(HttpRequest request, boolean idempotent) {
    if (request == null) {
      throw new NullPointerException("request");
    }
    return new MarkedRequest(request instanceof MarkedRequest marked ? marked.request : request, idempotent);
  }

  /** The mark of {@code request}: true idempotent, false not, null none (the method decides). */
  static @Nullable Boolean of(HttpRequest request) {
    return request instanceof MarkedRequest marked ? marked.idempotent : null;
  }

  @Override
  public Optional<BodyPublisher> bodyPublisher() {
    return request.bodyPublisher();
  }

  @Override
  public String method() {
    return request.method();
  }

  @Override
  public Optional<Duration> timeout() {
    return request.timeout();
  }

  @Override
  public boolean expectContinue() {
    return request.expectContinue();
  }

  @Override
  public URI uri() {
    return request.uri();
  }

  @Override
  public Optional<HttpClient.Version> version() {
    return request.version();
  }

  @Override
  public HttpHeaders headers() {
    return request.headers();
  }

  @Override
  public String toString() {
    return request + (idempotent ? " (marked idempotent)" : " (marked not idempotent)");
  }
}
