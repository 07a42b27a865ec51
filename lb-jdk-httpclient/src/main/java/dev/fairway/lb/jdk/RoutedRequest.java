package dev.fairway.lb.jdk;

import dev.fairway.lb.Target;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Optional;

/**
 * The caller's request sent to one target: the same method, headers, body, timeout and version,
 * with the URI's host and port replaced by the target's (scheme, user info, path and query kept).
 * Delegates instead of copying, so headers are not copied per attempt. The JDK's client sets
 * {@code Host} from this URI. Immutable.
 */
final class RoutedRequest extends HttpRequest {
  private final HttpRequest request;
  private final URI uri;

  private RoutedRequest(HttpRequest request, URI uri) {
    this.request = request;
    this.uri = uri;
  }

  /**
   * {@code request} for {@code target}, its URI from {@code uris}.
   *
   * @throws URISyntaxException if the target's host cannot stand in a URI
   */
  static RoutedRequest to(HttpRequest request, Target target, TargetUris uris) throws URISyntaxException {
    return new RoutedRequest(request, uris.routed(request.uri(), target));
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
    return uri;
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
    return uri + " " + method();
  }
}
