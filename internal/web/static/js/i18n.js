// The console's message catalogue: every string the shell and the account
// pages show comes from here, in English and Chinese. The language is the
// user's choice (remembered in localStorage), else the first of the
// browser's languages we speak (navigator.languages mirrors Accept-Language).

const STORE_KEY = "turnpike-lang";

const en = {
  "app.name": "Turnpike",
  "nav.section.Workspace": "Workspace", "nav.section.Administration": "Administration", "nav.section.Root": "Root",
  "nav.dashboard": "Dashboard", "nav.playground": "Playground", "nav.keys": "API keys", "nav.logs": "Usage logs",
  "nav.tasks": "Tasks", "nav.account": "Account & security", "nav.users": "Users", "nav.channels": "Channels",
  "nav.models": "Model prices", "nav.groups": "Groups", "nav.redemptions": "Redemption codes", "nav.plugins": "Task plugins",
  "nav.audit": "Audit log", "nav.aria": "Console",
  "shell.notFound": "Page not found", "shell.backHome": "Back to the dashboard", "shell.needsRole": "This page needs the {role} role.",
  "shell.logout": "Log out", "shell.themeLight": "Light theme", "shell.themeDark": "Dark theme", "shell.language": "Language",
  "login.title": "Log in", "login.intro": "Log in to manage keys, channels and usage, or to chat in the playground.",
  "login.username": "Username", "login.password": "Password", "login.submit": "Log in", "login.code": "Two-factor code",
  "login.codeHint": "The six-digit code from your authenticator app, or one of your recovery codes.",
  "login.sso": "Sign in with single sign-on", "login.noAccount": "No account yet?", "login.signup": "Create one",
  "login.oidcError": "Single sign-on did not complete ({code}). Try again, or log in with a password.",
  "signup.title": "Create an account", "signup.intro": "Choose a username and a password of at least 8 characters.",
  "signup.confirm": "Repeat the password", "signup.mismatch": "The passwords differ.", "signup.short": "At least 8 characters.",
  "signup.submit": "Create account", "signup.haveAccount": "Already have an account?", "signup.login": "Log in",
  "common.cancel": "Cancel", "common.save": "Save", "common.done": "Done", "common.copy": "Copy", "common.copied": "Copied",
  "common.previous": "Previous", "common.next": "Next", "common.pageOf": "Page {page} of {pages} · {total} total",
  "common.pages": "Pages", "common.empty": "Nothing here yet.", "common.apply": "Apply", "common.reset": "Reset",
  "common.all": "All", "common.never": "never", "common.time": "Time", "common.user": "User",
  "money.unit": "Unit", "money.quota": "Quota units", "money.usd": "US dollars", "money.unlimited": "Unlimited",
  "money.rate": "{quota} quota units = $1",
  "dash.title": "Dashboard", "dash.sub": "Signed in as {user} · group {group}", "dash.playground": "Open the playground",
  "dash.remaining": "Remaining quota", "dash.used": "Used quota", "dash.requests": "Recent requests", "dash.role": "Role",
  "dash.usage": "Recent usage", "dash.noRequests": "No requests yet. Send one from the playground or with an API key.",
  "chart.time": "Time", "chart.requests": "Requests", "chart.cost": "Cost", "chart.caption": "Requests and cost per interval", "chart.hourly": "Hourly, last 24 hours. A table with the same data follows.", "chart.daily": "Daily, last 14 days. A table with the same data follows.",
  "logs.title": "Usage logs", "logs.subAll": "Every user's calls, newest first.", "logs.subOwn": "Your calls, newest first.",
  "logs.type": "Type", "logs.model": "Model", "logs.anyModel": "any model", "logs.key": "API key", "logs.allKeys": "All keys",
  "logs.filter": "Filter logs", "logs.prompt": "Prompt", "logs.completion": "Completion", "logs.quota": "Quota",
  "logs.latency": "Latency", "logs.none": "No log entries match these filters.", "logs.playground": "playground",
  "logs.t.consume": "Consume", "logs.t.refund": "Refund", "logs.t.error": "Error", "logs.t.topup": "Top-up",
  "account.title": "Account & security", "account.sub": "Your password, two-factor sign-in and balance.",
  "account.balance": "Balance", "account.redeem": "Redeem a code", "account.redeemHint": "A code from your administrator, starting with tpr-.",
  "account.redeemSubmit": "Redeem", "account.redeemed": "Added {amount} to your balance.", "account.code": "Code",
  "account.password": "Change password", "account.oldPw": "Current password", "account.newPw": "New password",
  "account.pwChanged": "Password changed. Your other sessions were signed out.",
  "tfa.title": "Two-factor sign-in", "tfa.on": "Two-factor sign-in is on. {left} recovery codes left.",
  "tfa.off": "Two-factor sign-in is off. Turn it on to ask for a code from an authenticator app at every password sign-in.",
  "tfa.start": "Set up two-factor sign-in", "tfa.scan": "Scan this QR code with an authenticator app, or type the secret, then enter the code it shows.",
  "tfa.secret": "Secret", "tfa.qr": "QR code for your authenticator app", "tfa.enable": "Turn on", "tfa.disable": "Turn off",
  "tfa.disableHint": "A current code or a recovery code.",
  "tfa.recoveryTitle": "Your recovery codes", "tfa.recoveryIntro": "Each code signs you in once if you lose your authenticator. They are shown only now: keep them somewhere safe.",
  "tfa.turnedOff": "Two-factor sign-in is off.",
  "red.title": "Redemption codes", "red.sub": "Codes that add quota to whoever redeems them, once. A code is shown only when it is made.",
  "red.create": "Make codes", "red.name": "Name", "red.amount": "Value of each code", "red.count": "How many",
  "red.expires": "Expires", "red.expiresHint": "Leave empty for a code that never expires.", "red.code": "Code",
  "red.value": "Value", "red.state": "State", "red.usedBy": "Used by", "red.made": "Your new codes",
  "red.madeIntro": "Copy them now: they are stored only as hashes and cannot be shown again.", "red.none": "No codes yet.",
  "red.s.unused": "unused", "red.s.used": "used", "red.s.expired": "expired",
  "audit.title": "Audit log", "audit.sub": "Every state-changing call to the administration API: who, when, what and how it ended. Bodies are never kept.",
  "audit.user": "User", "audit.method": "Method", "audit.path": "Path starts with", "audit.since": "From", "audit.until": "Until",
  "audit.target": "Target", "audit.status": "Status", "audit.outcome": "Outcome", "audit.ip": "Address", "audit.none": "No entries match these filters.",
  "groups.title": "Groups", "groups.sub": "A group's ratio multiplies every price for its users; channels serve chosen groups.",
  "groups.add": "Add group", "groups.edit": "Edit group {name}", "groups.name": "Name", "groups.rename": "Renaming creates a new group; the old one stays.",
  "groups.ratio": "Price ratio", "groups.ratioHint": "1 is the list price, 0.5 half price.", "groups.actions": "Actions",
  "groups.editBtn": "Edit", "groups.delete": "Delete", "groups.confirm": "Delete group {name}?", "groups.deleted": "Group deleted", "groups.none": "No groups yet.",
  "tasks.title": "Tasks", "tasks.subAll": "Every user's asynchronous jobs, newest first.", "tasks.subOwn": "Your asynchronous jobs, newest first.",
  "tasks.status": "Status", "tasks.anyStatus": "Any status", "tasks.platform": "Platform", "tasks.platformHint": "plugin key, e.g. acme",
  "tasks.model": "Model", "tasks.anyModel": "any model", "tasks.userId": "User id", "tasks.everyone": "everyone", "tasks.filter": "Filter tasks",
  "tasks.refresh": "Refresh", "tasks.noneFiltered": "No tasks match these filters.",
  "tasks.none": "No tasks yet. Jobs submitted to task plugins (video, image, music) appear here.",
  "tasks.task": "Task", "tasks.details": "Details of {id}", "tasks.progress": "Progress", "tasks.progressOf": "Progress of {id}",
  "tasks.created": "Created", "tasks.took": "took {d}", "tasks.quota": "Quota", "tasks.refunded": "refunded",
  "tasks.refundedTitle": "{q} reserved, then refunded", "tasks.held": "held", "tasks.heldTitle": "reserved until the task ends",
  "tasks.action": "Action", "tasks.upstreamModel": "Upstream model", "tasks.channel": "Channel", "tasks.billing": "Billing",
  "tasks.submitted": "Submitted", "tasks.updated": "Updated", "tasks.finished": "Finished", "tasks.failReason": "Failure reason",
  "tasks.result": "Result", "tasks.vendorData": "Vendor data", "tasks.dialog": "Task {id}",
  "pg.title": "Playground", "pg.sub": "Chat with the models of your group. Calls are billed to your account like API calls.",
  "pg.temperature": "Temperature", "pg.top_p": "Top P", "pg.frequency_penalty": "Frequency penalty", "pg.presence_penalty": "Presence penalty",
  "pg.conversation": "Conversation", "pg.prompt": "Ask something…  (Enter to send, Shift+Enter for a new line)", "pg.send": "Send",
  "pg.stop": "Stop", "pg.clear": "Clear", "pg.message": "Message", "pg.settings": "Settings", "pg.group": "Group", "pg.model": "Model",
  "pg.maxTokens": "Max tokens", "pg.maxHint": "Upper bound on the answer's length. Empty means the model's default.", "pg.chat": "Chat",
  "pg.noModels": "No model list is available for this group; type a model name.", "pg.cleared": "Conversation cleared.",
  "pg.chooseModel": "Choose a model first.", "pg.typeMessage": "Type a message first.", "pg.badMax": "Max tokens must be a whole number of at least 1.",
  "pg.complete": "Answer complete.", "pg.stopped": "Stopped.", "pg.failed": "The request failed.", "pg.streaming": "Streaming…",
  "pg.you": "You", "pg.assistant": "Assistant", "pg.error": "Error",
  "pg.empty": "Pick a model, type a message and press Send. The answer appears here as it streams in.",
  "plugins.title": "Task plugins", "plugins.sub": "Plugins adapt asynchronous upstream APIs (video, image, music) to the gateway.",
  "plugins.installed": "Installed", "plugins.upload": "Upload", "plugins.marketplace": "Marketplace", "plugins.dryRun": "Dry run",
  "plugins.runtime": "Runtime status", "plugins.sections": "Task plugin sections",
  "audit.filter": "Filter the audit log", "audit.pathCol": "Path", "audit.anonymous": "anonymous",
};

const zh = {
  "app.name": "Turnpike",
  "nav.section.Workspace": "工作台", "nav.section.Administration": "管理", "nav.section.Root": "超级管理员",
  "nav.dashboard": "仪表盘", "nav.playground": "操练场", "nav.keys": "API 密钥", "nav.logs": "使用日志",
  "nav.tasks": "任务", "nav.account": "账户与安全", "nav.users": "用户", "nav.channels": "渠道",
  "nav.models": "模型价格", "nav.groups": "分组", "nav.redemptions": "兑换码", "nav.plugins": "任务插件",
  "nav.audit": "审计日志", "nav.aria": "控制台",
  "shell.notFound": "页面不存在", "shell.backHome": "返回仪表盘", "shell.needsRole": "此页面需要 {role} 角色。",
  "shell.logout": "退出登录", "shell.themeLight": "浅色主题", "shell.themeDark": "深色主题", "shell.language": "语言",
  "login.title": "登录", "login.intro": "登录以管理密钥、渠道和用量，或在操练场中对话。",
  "login.username": "用户名", "login.password": "密码", "login.submit": "登录", "login.code": "两步验证码",
  "login.codeHint": "身份验证器应用中的六位验证码，或一个恢复码。",
  "login.sso": "使用单点登录", "login.noAccount": "还没有账户？", "login.signup": "注册",
  "login.oidcError": "单点登录未完成（{code}）。请重试，或使用密码登录。",
  "signup.title": "注册账户", "signup.intro": "请选择用户名和至少 8 个字符的密码。",
  "signup.confirm": "再次输入密码", "signup.mismatch": "两次输入的密码不一致。", "signup.short": "至少 8 个字符。",
  "signup.submit": "注册", "signup.haveAccount": "已有账户？", "signup.login": "登录",
  "common.cancel": "取消", "common.save": "保存", "common.done": "完成", "common.copy": "复制", "common.copied": "已复制",
  "common.previous": "上一页", "common.next": "下一页", "common.pageOf": "第 {page} / {pages} 页 · 共 {total} 条",
  "common.pages": "分页", "common.empty": "暂无内容。", "common.apply": "应用", "common.reset": "重置",
  "common.all": "全部", "common.never": "永不", "common.time": "时间", "common.user": "用户",
  "money.unit": "单位", "money.quota": "额度", "money.usd": "美元", "money.unlimited": "无限",
  "money.rate": "{quota} 额度 = 1 美元",
  "dash.title": "仪表盘", "dash.sub": "当前用户 {user} · 分组 {group}", "dash.playground": "打开操练场",
  "dash.remaining": "剩余额度", "dash.used": "已用额度", "dash.requests": "近期请求", "dash.role": "角色",
  "dash.usage": "近期用量", "dash.noRequests": "还没有请求。可在操练场或用 API 密钥发送。",
  "chart.time": "时间", "chart.requests": "请求数", "chart.cost": "费用", "chart.caption": "每个时段的请求数和费用", "chart.hourly": "按小时，最近 24 小时。下方表格包含相同数据。", "chart.daily": "按天，最近 14 天。下方表格包含相同数据。",
  "logs.title": "使用日志", "logs.subAll": "所有用户的调用，最新在前。", "logs.subOwn": "你的调用，最新在前。",
  "logs.type": "类型", "logs.model": "模型", "logs.anyModel": "任意模型", "logs.key": "API 密钥", "logs.allKeys": "全部密钥",
  "logs.filter": "筛选日志", "logs.prompt": "提示", "logs.completion": "补全", "logs.quota": "额度",
  "logs.latency": "延迟", "logs.none": "没有符合条件的日志。", "logs.playground": "操练场",
  "logs.t.consume": "消费", "logs.t.refund": "退款", "logs.t.error": "错误", "logs.t.topup": "充值",
  "account.title": "账户与安全", "account.sub": "你的密码、两步验证和余额。",
  "account.balance": "余额", "account.redeem": "兑换", "account.redeemHint": "管理员提供的兑换码，以 tpr- 开头。",
  "account.redeemSubmit": "兑换", "account.redeemed": "已向余额添加 {amount}。", "account.code": "兑换码",
  "account.password": "修改密码", "account.oldPw": "当前密码", "account.newPw": "新密码",
  "account.pwChanged": "密码已修改，其他会话已退出。",
  "tfa.title": "两步验证", "tfa.on": "两步验证已开启，剩余 {left} 个恢复码。",
  "tfa.off": "两步验证未开启。开启后，每次用密码登录都需要身份验证器应用中的验证码。",
  "tfa.start": "设置两步验证", "tfa.scan": "用身份验证器应用扫描二维码或输入密钥，然后填写应用显示的验证码。",
  "tfa.secret": "密钥", "tfa.qr": "身份验证器应用的二维码", "tfa.enable": "开启", "tfa.disable": "关闭",
  "tfa.disableHint": "当前验证码或一个恢复码。",
  "tfa.recoveryTitle": "你的恢复码", "tfa.recoveryIntro": "丢失身份验证器时，每个恢复码可登录一次。它们只显示这一次，请妥善保存。",
  "tfa.turnedOff": "两步验证已关闭。",
  "red.title": "兑换码", "red.sub": "兑换后为兑换者增加额度，每个码只能用一次。兑换码只在生成时显示。",
  "red.create": "生成兑换码", "red.name": "名称", "red.amount": "每个码的面值", "red.count": "数量",
  "red.expires": "过期时间", "red.expiresHint": "留空表示永不过期。", "red.code": "兑换码",
  "red.value": "面值", "red.state": "状态", "red.usedBy": "使用者", "red.made": "新生成的兑换码",
  "red.madeIntro": "请立即复制：兑换码只以哈希保存，无法再次显示。", "red.none": "还没有兑换码。",
  "red.s.unused": "未使用", "red.s.used": "已使用", "red.s.expired": "已过期",
  "audit.title": "审计日志", "audit.sub": "对管理 API 的每次变更调用：谁、何时、做了什么、结果如何。从不保存请求内容。",
  "audit.user": "用户", "audit.method": "方法", "audit.path": "路径前缀", "audit.since": "起始", "audit.until": "截止",
  "audit.target": "对象", "audit.status": "状态码", "audit.outcome": "结果", "audit.ip": "地址", "audit.none": "没有符合条件的记录。",
  "groups.title": "分组", "groups.sub": "分组倍率会乘到该组用户的每个价格上；渠道服务于所选分组。",
  "groups.add": "添加分组", "groups.edit": "编辑分组 {name}", "groups.name": "名称", "groups.rename": "改名会创建新分组，旧分组保留。",
  "groups.ratio": "价格倍率", "groups.ratioHint": "1 为原价，0.5 为半价。", "groups.actions": "操作",
  "groups.editBtn": "编辑", "groups.delete": "删除", "groups.confirm": "删除分组 {name}？", "groups.deleted": "分组已删除", "groups.none": "还没有分组。",
  "tasks.title": "任务", "tasks.subAll": "所有用户的异步任务，最新在前。", "tasks.subOwn": "你的异步任务，最新在前。",
  "tasks.status": "状态", "tasks.anyStatus": "任意状态", "tasks.platform": "平台", "tasks.platformHint": "插件标识，如 acme",
  "tasks.model": "模型", "tasks.anyModel": "任意模型", "tasks.userId": "用户 ID", "tasks.everyone": "所有人", "tasks.filter": "筛选任务",
  "tasks.refresh": "刷新", "tasks.noneFiltered": "没有符合条件的任务。",
  "tasks.none": "还没有任务。提交给任务插件的作业（视频、图像、音乐）会显示在这里。",
  "tasks.task": "任务", "tasks.details": "{id} 的详情", "tasks.progress": "进度", "tasks.progressOf": "{id} 的进度",
  "tasks.created": "创建时间", "tasks.took": "耗时 {d}", "tasks.quota": "额度", "tasks.refunded": "已退款",
  "tasks.refundedTitle": "预留 {q}，随后退款", "tasks.held": "预留中", "tasks.heldTitle": "任务结束前预留",
  "tasks.action": "动作", "tasks.upstreamModel": "上游模型", "tasks.channel": "渠道", "tasks.billing": "计费",
  "tasks.submitted": "提交时间", "tasks.updated": "更新时间", "tasks.finished": "完成时间", "tasks.failReason": "失败原因",
  "tasks.result": "结果", "tasks.vendorData": "供应商数据", "tasks.dialog": "任务 {id}",
  "pg.title": "操练场", "pg.sub": "与你所在分组的模型对话。调用会像 API 调用一样计入你的账户。",
  "pg.temperature": "温度", "pg.top_p": "Top P", "pg.frequency_penalty": "频率惩罚", "pg.presence_penalty": "存在惩罚",
  "pg.conversation": "对话", "pg.prompt": "输入问题…（Enter 发送，Shift+Enter 换行）", "pg.send": "发送",
  "pg.stop": "停止", "pg.clear": "清空", "pg.message": "消息", "pg.settings": "设置", "pg.group": "分组", "pg.model": "模型",
  "pg.maxTokens": "最大 token 数", "pg.maxHint": "回答长度上限。留空使用模型默认值。", "pg.chat": "聊天",
  "pg.noModels": "此分组没有可用的模型列表，请输入模型名称。", "pg.cleared": "对话已清空。",
  "pg.chooseModel": "请先选择模型。", "pg.typeMessage": "请先输入消息。", "pg.badMax": "最大 token 数必须是不小于 1 的整数。",
  "pg.complete": "回答完成。", "pg.stopped": "已停止。", "pg.failed": "请求失败。", "pg.streaming": "正在生成…",
  "pg.you": "你", "pg.assistant": "助手", "pg.error": "错误",
  "pg.empty": "选择模型，输入消息并点击发送。回答会在这里逐步显示。",
  "plugins.title": "任务插件", "plugins.sub": "插件把异步上游 API（视频、图像、音乐）接入网关。",
  "plugins.installed": "已安装", "plugins.upload": "上传", "plugins.marketplace": "插件市场", "plugins.dryRun": "试运行",
  "plugins.runtime": "运行状态", "plugins.sections": "任务插件分区",
  "audit.filter": "筛选审计日志", "audit.pathCol": "路径", "audit.anonymous": "匿名",
};

/** LANGUAGES are the catalogues, by language tag. */
export const LANGUAGES = { en: { name: "English", table: en }, zh: { name: "中文", table: zh } };

/** pick chooses a language from a stored choice and the browser's list. */
export function pick(stored, browser) {
  if (stored && LANGUAGES[stored]) return stored;
  for (const tag of browser || []) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES[base]) return base;
  }
  return "en";
}

function stored() {
  try { return localStorage.getItem(STORE_KEY); } catch { return null; }
}

let current = pick(stored(), navigator.languages || [navigator.language]);
document.documentElement.lang = current === "zh" ? "zh-CN" : "en";

/** lang is the language in use. */
export function lang() {
  return current;
}

/** setLang switches and remembers the language; the caller re-renders. */
export function setLang(next) {
  if (!LANGUAGES[next]) return;
  current = next;
  document.documentElement.lang = next === "zh" ? "zh-CN" : "en";
  try { localStorage.setItem(STORE_KEY, next); } catch { /* private mode */ }
}

/** t looks a message up and fills its {placeholders}; a missing key shows itself. */
export function t(key, vars) {
  const s = LANGUAGES[current].table[key] ?? en[key] ?? key;
  return vars ? s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m)) : s;
}

/** missing lists keys one catalogue has and the other lacks (for tests). */
export function missing() {
  const a = Object.keys(en), b = Object.keys(zh);
  return [...a.filter((k) => !(k in zh)), ...b.filter((k) => !(k in en))];
}
