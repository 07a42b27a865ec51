package dev.fairway.lb.jdk;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Optional;

/** A request that sends what another sends and carries an {@link Idempotency} mark. Immutable. */
final class MarkedRequest extends HttpRequest {
  private final HttpRequest request;
  private final Idempotency idempotency;

  MarkedRequest(HttpRequest request, Idempotency idempotency) {
    this.request = request;
    this.idempotency = idempotency;
  }

  HttpRequest unmarked() {
    return request;
  }

  Idempotency idempotency() {
    return idempotency;
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
    return request + " (" + idempotency + ")";
  }
}
