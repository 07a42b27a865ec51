package dev.fairway.lb.hc5;

import static dev.fairway.lb.testing.Eventually.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.Target;
import java.util.List;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.net.URIAuthority;
import org.junit.jupiter.api.Test;

class TargetRoutesTest {
  private static final HttpRoute PLANNED = new HttpRoute(new HttpHost("http", "orders", 80));

  @Test
  void route_keepsThePlannedRoutesShape_withTheTargetAsItsEnd_andIsMadeOncePerPlannedRoute() throws Exception {
    TargetRoutes routes = new TargetRoutes("orders");
    Target a = Target.of("10.0.0.1", 8080);

    HttpRoute first = routes.of(a).route(PLANNED);
    assertThat(first.getTargetHost()).isEqualTo(new HttpHost("http", "10.0.0.1", 8080));
    assertThat(first.getProxyHost()).isNull();
    assertThat(routes.of(a).authority).isEqualTo(new URIAuthority("10.0.0.1", 8080));
    // Another exchange plans an equal route of its own: the cached one serves it.
    assertThat(routes.of(a).route(new HttpRoute(new HttpHost("http", "orders", 80)))).isSameAs(first);

    HttpHost proxy = new HttpHost("http", "proxy", 3128);
    HttpRoute viaProxy = routes.of(a).route(new HttpRoute(new HttpHost("https", "orders", 443), null, proxy, true));
    assertThat(viaProxy.getTargetHost()).isEqualTo(new HttpHost("https", "10.0.0.1", 8080));
    assertThat(viaProxy.getProxyHost()).isEqualTo(proxy);
    assertThat(viaProxy.isSecure()).isTrue();
  }

  @Test
  void of_makesANewEntryWhenTheAddressUnderAnIdChanges() {
    TargetRoutes routes = new TargetRoutes("orders");
    TargetRoutes.Entry old = routes.of(Target.of("10.0.0.1", 8080).withId("a"));
    assertThat(routes.of(Target.of("10.0.0.1", 8080).withId("a"))).isSameAs(old);
    TargetRoutes.Entry moved = routes.of(Target.of("10.0.0.2", 8080).withId("a"));
    assertThat(moved).isNotSameAs(old);
    assertThat(moved.authority).isEqualTo(new URIAuthority("10.0.0.2", 8080));
    assertThat(routes.size()).isEqualTo(1);
  }

  @Test
  void aDepartedTargetsEntry_goesWithIt() throws Exception {
    Target a = Target.of("10.0.0.1", 8080);
    Target b = Target.of("10.0.0.2", 8080);
    MutableTargetSource source = new MutableTargetSource(List.of(a, b));
    try (LoadBalancer lb = LoadBalancer.builder("orders").targets(source).build()) {
      ServiceRoute route = new ServiceRoute("orders", lb, 0.2, 10, System::nanoTime, new int[] {503});
      route.targets.of(a);
      route.targets.of(b);
      assertThat(route.targets.size()).isEqualTo(2);

      source.remove(a);
      eventually("a's entry dropped", () -> route.targets.size() == 1);
    }
  }
}
