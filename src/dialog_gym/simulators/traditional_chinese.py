"""Chinese written in traditional characters, read as the simplified Chinese the judge knows.

Every Chinese reading of the v2 judge (the act lexicons, the cues, the speech-act model, the
prior's familiar characters) is written in simplified characters. A reply in traditional
characters (說, 別, 難過), or a simplified one with a few traditional characters put in where
the lexicons look (你應該明白), was read as unfamiliar characters: its unkindness unseen, its
warmth too. `simplified` writes such a text in simplified characters, character by character,
as a person who reads both reads it.

The table is the team's own: 1,326 simplified characters with a traditional form of their
own (1,390 traditional characters, variants included: 為/爲, 裡/裏, 說/説), written for the
characters of the bundled readings and of the recorded replies. Where simplified Chinese writes a
traditional character too, with a meaning of its own (慰藉, 覆盖, 神祇), it stays, or is read as
simplified only by its neighbours: 著 is 着 (看著) but in 著名, 顯著, 著作, 著稱; 藉 is 借 (藉口,
憑藉) but in 慰藉, 狼藉; 覆 is 复 in 反覆, 回覆, 答覆. A few words a character at a time would not
give are read whole (甚麼, 彷彿, 傢俱, 項鍊).

Checked against OpenCC's simplified-to-traditional conversions (not shipped; run by hand): the
600 recorded dialogues written traditionally (OpenCC s2t, s2tw, s2hk) read back character for
character but for 54-62 of their 6.1 million Chinese characters (坐/座, 链/炼, 复/覆, 呆/待, where
OpenCC's choice is a word's); the Chinese contrast sets so written score as written in
simplified characters.
"""

from __future__ import annotations

import re

# Each group: a simplified character, then its traditional form(s).
_GROUPS = """
对對 这這 了瞭 时時 达達 复復複 话話 议議 会會 为為爲 说說説 过過 动動 个個箇 来來 语語 题題 让讓 并並併幷
实實 体體 问問 内內 试試 张張 觉覺 应應 认認 气氣 面麵麪 绪緒 们們 没沒 关關 无無 点點 现現 么麼麽 学學
间間 还還 晓曉 态態 帮幫 于於 种種 当當噹 决決 听聽 满滿 与與 简簡 开開 经經 困睏 进進 确確 给給 隐隱
里裡裏 习習 倾傾 风風 陈陳 调調 压壓 发發髮 别別彆 后後 标標 带帶 系係繫 样樣 尝嘗嚐 沟溝 虑慮 业業 变變
该該 导導 细細 难難 续續 注註 只隻 贴貼 机機 结結 愿願 够夠 长長 许許 画畫 兴興 从從 图圖 松鬆 伟偉 选選
继繼 诉訴 励勵 担擔 单單 亲親 周週 烦煩 处處 寻尋 适適 负負 洁潔 观觀 论論 状狀 轻輕 师師 温溫 节節 静靜
仅僅 视視 记記 专專 见見 冲衝沖 谢謝 爱愛 将將 择擇 况況 错錯 据據 际際 讨討 怀懷 户戶 场場 总總 词詞
虽雖 欢歡 赵趙 坚堅 创創 吗嗎 极極 备備 质質 准準 价價 设設 显顯 几幾 计計 独獨 职職 缓緩 详詳 随隨 两兩
划劃 识識 历歷曆 谈談 转轉 制製 顾顧 儿兒 尽盡儘 术術 积積 责責 诚誠 触觸 评評 响響 艺藝 请請 志誌 蕴蘊藴
奖獎 练練 较較 夸誇 游遊 惯慣 证證 环環 却卻 获獲穫 乐樂 写寫 务務 验驗 询詢 热熱 才纔 误誤 参參蔘 层層
办辦 戏戲 录錄 头頭 扰擾 离離 战戰 败敗 断斷 钟鐘鍾 连連 类類 线線綫 惫憊 妈媽 边邊 释釋 数數 条條 杂雜
绝絕 忧憂 紧緊 致緻 规規 远遠 课課 电電 项項 丧喪 义義 围圍 枫楓 终終 资資 换換 东東 声聲 减減 领領 书書
产產 针針鍼 门門 暂暫 泄洩 宁寧 优優 马馬 骤驟 赏賞 级級 团團糰 读讀 丝絲 赞讚贊 灵靈 训訓 护護 车車 辅輔
预預 键鍵 馈饋 谨謹 则則 报報 稳穩 险險 鸣鳴 队隊 笔筆 犹猶 费費 争爭 约約 渐漸 异異 启啟啓 双雙 顺順
执執 脑腦 医醫 维維 传傳 愤憤 钱錢 绩績 联聯 频頻 权權 运運 乱亂 员員 凯凱 汇匯彙 谁誰 讽諷 咨諮 养養
构構 阳陽 岁歲 辩辯 临臨 丽麗 干幹乾 测測 恋戀 击擊 恼惱 忆憶 组組 阶階 纳納 龄齡 协協 板闆 讲講 龙龍
贵貴 势勢 虚虛 装裝 伤傷 扎紮 弃棄 块塊 济濟 刘劉 补補 阅閱閲 华華 统統 谷穀 辞辭 拟擬 园園 属屬 杰傑
台臺檯颱枱 尔爾 黄黃 纠糾 悦悅 号號 严嚴 礼禮 潜潛 绘繪 饭飯 挣掙 颖穎 区區 买買 叶葉 庄莊 馆館 摄攝 纯純
剧劇 举舉 懒懶 云雲 赖賴 纸紙 泽澤 轩軒 刚剛 网網 布佈 吴吳 谦謙 涛濤 锐銳鋭 采採 逊遜 盘盤 惊驚 础礎
瑶瑤 签簽籤 仪儀 宽寬 审審 脱脫 万萬 尴尷 毕畢 奋奮 梦夢 邻鄰 轮輪 克剋 颜顏 墙牆 劲勁 摆擺 拥擁 夹夾
疗療 闭閉 监監 检檢 径徑 绕繞 宝寶 众眾衆 营營 撑撐 彻徹 须須鬚 赛賽 饰飾 脚腳 览覽 额額 财財 托託 旧舊
镜鏡 范範 诺諾 药藥 余餘 侣侶 闹鬧 腻膩 织織 闪閃 惧懼 浓濃 递遞 迈邁 竞競 国國 征徵 邮郵 畅暢 碍礙 坏壞
账賬 购購 胜勝 灯燈 谱譜 缩縮 迟遲 辑輯 斗鬥 闲閒閑 软軟 称稱 阴陰 纪紀 践踐 弹彈 爷爺 广廣 编編 归歸
丰豐 鲜鮮 闷悶 伙夥 饮飲 趋趨 琐瑣 劳勞 辈輩 骗騙 顿頓 丢丟 挂掛 挥揮 络絡 树樹 雾霧 锁鎖 荣榮 荐薦 岗崗
御禦 郁鬱 赌賭 遗遺 骚騷 骂罵 涂塗 档檔 损損 输輸 银銀 谜謎 颗顆 迹跡蹟 脸臉 恶惡噁 疯瘋 浅淺 欲慾 猫貓
码碼 缘緣 懑懣 筑築 厌厭 盖蓋 扬揚 纷紛 链鏈 厉厲 赢贏 卖賣 销銷 抚撫 绍紹 宫宮 谊誼 占佔 页頁 舍捨 涨漲
贷貸 逻邏 艰艱 诗詩 劝勸 肤膚 谐諧 颈頸 荡蕩盪 闻聞 赶趕 绿綠 骄驕 癫癲 红紅 册冊 溃潰 悬懸 诊診 顶頂
铺鋪 敛斂 犷獷 摇搖 挤擠 浏瀏 厅廳 腾騰 阵陣 炼煉鍊 楼樓 弯彎 扩擴 违違 驳駁 诱誘 抛拋 库庫 钢鋼 载載
轨軌 侦偵 谓謂 鱼魚 凭憑 阂閡 驾駕 韧韌 庆慶 跃躍 笼籠 岛島 亏虧 侧側 军軍 扫掃 访訪 贬貶 凉涼 飞飛 踪蹤
饪飪 剂劑 钥鑰 桥橋 订訂 槛檻 壳殼 晋晉 蓝藍 鸦鴉 献獻 攒攢 牺犧 侄姪 唤喚 齐齊 绑綁 卷捲 敌敵 卫衛衞
币幣 钓釣 仓倉 瘾癮 废廢 叠疊 烧燒 俩倆 润潤 鲁魯 闺閨 纹紋 脉脈 裤褲 栏欄 贯貫 抢搶 绷繃 涌湧 罚罰 综綜
浇澆 讯訊 赚賺 宠寵 缝縫 飘飄 锚錨 筛篩 牵牽 胆膽 叙敘敍 窝窩 摊攤 拨撥 赋賦 聪聰 吓嚇 娱娛 厨廚 恳懇
锻鍛 垫墊 缠纏 烟煙菸 贡貢 晒曬 乡鄉 晕暈 啧嘖 冻凍 淀澱 缚縛 挡擋 羡羨 铁鐵 阔闊 盏盞 胡鬍衚 弥彌瀰 肃肅
译譯 讼訟 货貨 叹嘆歎 窥窺 驱驅 衬襯 赔賠 巩鞏 谅諒 狱獄 篮籃 轴軸 湿濕溼 蔑衊 偿償 伪偽僞 屉屜 镇鎮
钩鉤鈎 闯闖 誉譽 杀殺 钻鑽 储儲 滞滯 呗唄 夺奪 罗羅 锦錦 净淨 柜櫃 迁遷 惩懲 携攜 鉴鑑鑒 删刪 慑懾 圆圓
鸟鳥 艳艷豔 鸡雞鷄 汤湯 驶駛 蒙矇濛 谧謐 残殘 唠嘮 勋勳 债債 诈詐 怜憐 绳繩 胁脅 瞒瞞 砖磚 诸諸 铃鈴 铜銅
贝貝 帘簾 袭襲 凑湊 兑兌 颇頗 酿釀 窍竅 皱皺 颤顫 烂爛 衅釁 滚滾 胶膠 遥遙 锅鍋 讥譏 辙轍 绣繡 饱飽 滤濾
厘釐 剥剝 罢罷 泪淚 绽綻 虫蟲 顽頑 尘塵 骑騎 酝醞醖 脏髒臟 拦攔 拢攏 筹籌 纲綱 荧熒 渍漬 矫矯 卧臥 灭滅
屡屢 灾災 猎獵 厂廠 烁爍 伞傘 窃竊 讳諱 孙孫 诀訣 捣搗 暧曖 钉釘 搁擱 壮壯 揽攬 赠贈 萤螢 妆妝 洒灑 咙嚨
铅鉛 坠墜 泼潑 辆輛 嚣囂 贪貪 诞誕 痒癢 剑劍 蚀蝕 谣謠 锯鋸 丑醜 馁餒 怼懟 渗滲 舱艙 坛壇罈 喂餵 涩澀
喷噴 轰轟 滩灘 讶訝 兽獸 盐鹽 涟漣 嘘噓 厕廁 纽紐 肾腎 妇婦 绒絨 捡撿 齿齒 寿壽 祸禍 耻恥 娇嬌 伦倫 阀閥
藓蘚 挚摯 苍蒼 陆陸 啰囉 缴繳 掺摻 刮颳 胀脹 饼餅 锋鋒 绸綢 睁睜 谋謀 呐吶 阐闡 凿鑿 凶兇 钮鈕 舆輿 颁頒
纵縱 缀綴 丛叢 谬謬 蜡蠟 纱紗 烫燙 乌烏 亚亞 垒壘 麦麥 饿餓 绞絞 绊絆 炉爐 矿礦 湾灣 烛燭 鲤鯉 穷窮 诨諢
飙飆 瞩矚 呛嗆 扑撲 驻駐 瘫癱 畴疇 庞龐 鸿鴻 苹蘋 阈閾 盗盜 钦欽 枪槍 锤錘 霉黴 叽嘰 婴嬰 朴樸 农農 柠檸
萦縈 贸貿 衔銜 赅賅 茧繭 胧朧 缕縷 焕煥 浆漿 韵韻 奥奧 萝蘿 欧歐 苏蘇甦 钛鈦 刍芻 拧擰 横橫 酱醬 壶壺
钝鈍 辉輝 葱蔥 檐簷 绵綿 泻瀉 颠顛 佣傭 驯馴 铭銘 饶饒 狭狹 惨慘 帅帥 贼賊 堑塹 县縣 笃篤 巅巔 哟喲 袜襪
睐睞 谑謔 涡渦 噜嚕 浑渾 捞撈 竖豎 哑啞 杠槓 谎謊 禅禪 鹃鵑 尸屍 仑侖 鸽鴿 掷擲 诶誒 枣棗 锈鏽 挠撓
钵缽鉢 毡氈 嘱囑 毁毀燬 哗嘩譁 灿燦 肠腸 郑鄭 汉漢 晖暉 颚顎 缪繆 斓斕 哔嗶 挟挾 馅餡 钴鈷 蜕蛻 灶竈 玛瑪
圣聖 绎繹 鹅鵝 粮糧 炖燉 颓頹 霭靄 诠詮 纺紡 辟闢 颊頰 届屆 渊淵 怅悵 硕碩 饺餃 拣揀 贺賀 俭儉 诵誦 侠俠
猪豬 痪瘓 钳鉗 斩斬 砾礫 铠鎧 杨楊 莲蓮 莹瑩 帧幀 亿億 萨薩 驭馭 秃禿 缆纜 樱櫻 浊濁 锏鐧 辗輾 坟墳 阁閣
桩樁 鸭鴨 纬緯 蛮蠻 抠摳 惮憚 辖轄 滥濫 赘贅 啬嗇 旷曠 栋棟 鹦鸚 鹉鵡 寝寢 殡殯 亩畝 铛鐺 羁羈 堕墮 咸鹹
卜蔔 笋筍 沦淪 腊臘 洼窪 岳嶽 椭橢 党黨 啸嘯 橱櫥 蚂螞 蚁蟻 躯軀 撸擼 呕嘔 栈棧 宾賓 涣渙 匮匱 饥飢饑
闸閘 诿諉 觅覓 纰紕 饵餌 荠薺 毙斃 疡瘍 剐剮 疮瘡 缮繕 翘翹 贱賤 怂慫 帐帳 婶嬸 忏懺 恻惻 悯憫 惬愜 恹懨
愦憒 恸慟 惭慚 谄諂 谀諛 诋詆 诽誹 谤謗 讹訛 诬誣 诡詭 谴譴 讪訕 讷訥 诳誑 诲誨 诫誡 诘詰 谆諄 谏諫 谍諜
谙諳 谚諺 谛諦 谗讒 贤賢 贩販 贫貧 赐賜 颂頌 阑闌 绅紳 纤纖 缔締 缤繽 沥瀝 滨濱 潇瀟 渔漁 饲飼 馒饅 驰馳
骏駿 骆駱 乔喬 侨僑 轿轎 龟龜 凤鳳 兰蘭 侥僥 刹剎 匀勻 卢盧 厢廂 厦廈 吕呂 吨噸 呜嗚 咏詠 坝壩 垄壟 垦墾
妩嫵 娄婁 宪憲 岂豈 岭嶺 峡峽 庐廬 庙廟 强強 昼晝 芦蘆 茎莖 萧蕭 蔼藹 韦韋 肮骯 肿腫 搂摟 搅攪 迩邇 挨捱
恒恆 峰峯 床牀 污汙 群羣 吃喫 念唸 咽嚥 核覈 扣釦 荤葷 家傢 钙鈣 背揹 回迴 抵牴 秘祕 表錶 愈癒 佛彿 梁樑
局侷 向嚮 岩巖 折摺 同衕 搜蒐 肴餚 痴癡 弦絃 酸痠 棱稜 痹痺 症癥 杆桿 杯盃 升昇 私俬 秋鞦 千韆 巨鉅 彩綵
姜薑 镀鍍 窑窯 桠椏 蝎蠍 饽餑 骇駭 粝糲 溅濺 屿嶼 涤滌 缜縝 帜幟 峦巒 濒瀕 镁鎂 锣鑼 颅顱 辄輒 荫蔭 耸聳
枢樞 赎贖 馋饞 咛嚀 雇僱 锥錐 扪捫 雏雛 辐輻 哒噠 轶軼 镊鑷 缭繚 鳞鱗 辫辮 跄蹌 泞濘 筝箏 蝉蟬 蛎蠣 崭嶄
腌醃 锹鍬 驼駝 邓鄧 绛絳 棂欞 轼軾 娴嫻嫺 铸鑄 绗絎 镂鏤 脐臍 轧軋 韩韓 锡錫 獭獺 仆僕 修脩 吁籲 唇脣
幸倖 忾愾 擞擻 斋齋 栖棲 栗慄 榄欖 歼殲 氲氳 汹洶 涧澗 澜瀾 炽熾 犊犢 狈狽 碱鹼 篑簣 籁籟 粽糉 纾紓 绚絢
绯緋 缛縟 缨纓 缬纈 缰繮韁 聋聾 腼靦 芜蕪 荟薈 莱萊 蓦驀 虾蝦 蜗蝸 袄襖 诛誅 谭譚 蹰躕 蹿躥 辍輟 辕轅
铆鉚 铐銬 铝鋁 锢錮 锲鍥 镖鏢 镣鐐 镳鑣 镶鑲 闼闥 雳靂 靓靚 颌頜 颐頤 驴驢 驿驛 魇魘 鸯鴦 鸳鴛 龈齦
"""

TO_SIMPLIFIED = {ord(char): group[0] for group in _GROUPS.split() for char in group[1:]}
# The other way, for the red team (`redteam.disguise`): each simplified character as its first traditional form.
_TO_TRADITIONAL = {ord(group[0]): group[1] for group in _GROUPS.split()} | {ord("着"): "著"}
_TRADITIONAL = re.compile("[" + "".join(map(chr, TO_SIMPLIFIED)) + "]")
# Two that simplified Chinese writes too, read as simplified only in a text with other
# traditional characters, and by their neighbours (see the module docstring).
_ZHE = re.compile("(?<![显顯卓昭土原巨编編名])著(?![名作称稱述])")
_JIE = re.compile("(?<![慰狼枕蕴蘊])藉")
# Words a character at a time would not give: 甚麼 is 什么, 彷彿 仿佛, 傢俱 家具, 項鍊 项链;
# 反覆, 回覆, 覆盤 are 反复, 回复, 复盘.
_WORDS = {
    "甚麼": "什么", "甚么": "什么", "彷佛": "仿佛", "家俱": "家具", "项炼": "项链",
    **{word: word.replace("覆", "复") for word in ("反覆", "回覆", "答覆", "重覆", "覆盘", "覆述")},
}
_WORD = re.compile("|".join(_WORDS))


def simplified(text: str) -> str:
    """`text` with its traditional characters written in simplified ones (`text` itself when it
    has none)."""
    if text.isascii() or not _TRADITIONAL.search(text):
        return text
    text = _WORD.sub(lambda match: _WORDS[match.group(0)], text.translate(TO_SIMPLIFIED))
    return _JIE.sub("借", _ZHE.sub("着", text))


def traditional(text: str) -> str:
    """`text` with every simplified character of the table written in its (first) traditional
    form: the disguise a policy would try (`redteam.disguise`), not a conversion a person would
    take for a careful one (it knows no words)."""
    return text.translate(_TO_TRADITIONAL)
