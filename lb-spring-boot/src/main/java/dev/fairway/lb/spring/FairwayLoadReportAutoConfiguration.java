package dev.fairway.lb.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Server side, with {@code fairway.server.load-reports.enabled=true}: every response of this web
 * application carries ORCA's {@code endpoint-load-metrics} header ({@link LoadReport}), so Fairway
 * clients see this server's real load. A servlet filter in a servlet application, a {@code WebFilter}
 * in a reactive one.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.server.load-reports", name = "enabled", havingValue = "true")
public class FairwayLoadReportAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  LoadReport fairwayLoadReport(FairwayProperties properties, Environment environment) {
    return LoadReport.fromEnvironment(properties.getServer().getLoadReports(), environment);
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = {"jakarta.servlet.Filter", "org.springframework.web.filter.OncePerRequestFilter"})
  static class Servlet {
    @Bean
    @ConditionalOnMissingBean
    LoadReportFilter fairwayLoadReportFilter(LoadReport load) {
      return new LoadReportFilter(load);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(name = {"org.springframework.web.server.WebFilter", "reactor.core.publisher.Mono"})
  static class Reactive {
    @Bean
    @ConditionalOnMissingBean
    LoadReportWebFilter fairwayLoadReportWebFilter(LoadReport load) {
      return new LoadReportWebFilter(load);
    }
  }
}
