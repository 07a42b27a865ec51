package dev.fairway.lb.hc5;

import java.io.IOException;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;

/**
 * HttpClient's retry strategy once Fairway is added: an exchange that Fairway's handler balanced is
 * never retried by HttpClient's {@code RETRY} element, which sits outside the handler and would send
 * the whole balanced exchange again (Fairway already retried it on other targets, within its
 * budget); every other request is left to {@code otherRequests}. The handler marks the exchange in
 * its context ({@link BalancingExecHandler#BALANCED}) on every pass, balanced or not, so a context
 * reused across requests never carries an old mark.
 */
final class BalancedRetryStrategy implements HttpRequestRetryStrategy {
  private final HttpRequestRetryStrategy otherRequests;

  BalancedRetryStrategy(HttpRequestRetryStrategy otherRequests) {
    this.otherRequests = otherRequests;
  }

  static boolean balanced(HttpContext context) {
    return context.getAttribute(BalancingExecHandler.BALANCED) != null;
  }

  @Override
  public boolean retryRequest(HttpRequest request, IOException exception, int execCount, HttpContext context) {
    return !balanced(context) && otherRequests.retryRequest(request, exception, execCount, context);
  }

  @Override
  public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
    return !balanced(context) && otherRequests.retryRequest(response, execCount, context);
  }

  @Override
  public TimeValue getRetryInterval(HttpRequest request, IOException exception, int execCount, HttpContext context) {
    return otherRequests.getRetryInterval(request, exception, execCount, context);
  }

  @Override
  public TimeValue getRetryInterval(HttpResponse response, int execCount, HttpContext context) {
    return otherRequests.getRetryInterval(response, execCount, context);
  }

  @Override
  public String toString() {
    return "BalancedRetryStrategy{otherRequests=" + otherRequests + "}";
  }
}
