// Logging set-up (see logging.h).
#include "server/core/logging.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace qf::server {

bool setup_logging(const std::string& level, const std::string& file, std::string* error) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    if (error) *error = "unknown log level '" + level + "' (trace, debug, info, warn, error, off)";
    return false;
  }
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (!file.empty())
      logger = std::make_shared<spdlog::logger>("quickfill",
                                                std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, false));
    else
      logger = std::make_shared<spdlog::logger>("quickfill", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } catch (const spdlog::spdlog_ex& e) {
    if (error) *error = std::string("cannot open log file: ") + e.what();
    return false;
  }
  logger->set_level(lvl);
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] [%t] %v");
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return true;
}

}  // namespace qf::server
